"""``ppo``: a policy trained by ``bourre train`` (``train/ppo/trainer.py``, or ``train/sb3/trainer.py``), played
from its exported weights with numpy.

``agents.make("ppo")`` loads the shipped model (``agents/models/ppo.npz``, trained by the batched trainer
at tables of 2 to 8 players; the observation layout is the same at every table size);
``agents.make("ppo:path/to/policy.npz")`` loads any exported policy. The agent plays the most
probable legal action; ``PPOAgent(policy, seed=s, sample=True)`` samples from the masked
softmax instead.

The file format is a plain ``.npz`` read with ``allow_pickle=False``: nothing in it can run code.
It holds the actor's dense layers (``layers.K.weight`` with shape ``(out, in)``, ``layers.K.bias``)
and ``action.weight`` / ``action.bias``, plus ``meta``: a JSON string with ``format``
(``"bourre-ppo-policy"``), ``version``, ``obs_size``, ``num_actions``, ``activation`` (``relu`` or
``tanh``) and free-form provenance (the training command and seed). A missing, corrupt or
wrong-shaped file raises ``ValueError`` saying what is wrong: weights that are not floating-point
numbers too, and an entry whose header claims more data than the entry holds (checked before
anything is allocated; a policy file holds at most ``MAX_POLICY_BYTES`` of arrays). Inference needs
neither torch nor the training extras.

``obs_size`` is the vector size of the observation version the policy was trained on
(``bourre_env.observation.VERSION_SIZES``). Each version's layout is a prefix of the next, so a
policy of an older version is given the first ``obs_size`` entries of today's observation (a
version-1 policy does not see the decision round and the variant rules that version 2 appended).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import math
import zipfile
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from agents.base import Observation, legal_actions
from bourre_env.atomic_files import check_readable_file, replacing
from bourre_env.core import NUM_ACTIONS
from bourre_env.observation import VERSION_SIZES

__all__ = [
    "PolicyWeights",
    "PackedPolicy",
    "forward_row",
    "forward_rows",
    "PPOAgent",
    "cached_policy",
    "load_policy",
    "save_policy",
    "network_layers",
    "pack_layers",
    "read_weights_file",
    "make_ppo",
    "SHIPPED_MODEL",
    "FORMAT",
]

FORMAT = "bourre-ppo-policy"
VERSION = 1
SHIPPED_MODEL = Path(__file__).resolve().parent / "models" / "ppo.npz"
_ACTIVATIONS = ("relu", "tanh")
MAX_POLICY_BYTES = 2**30
"""Most bytes of arrays a policy file may hold (the shipped model holds under 2 MB)."""
NO_POLICY_HINT = (
    " (train one with bourre train: its run folder's model.npz; or use agents.make('ppo') for the shipped model)"
)
MAX_ENTRIES = 256
"""Most arrays a weights file may hold: two a layer and the meta (the shipped model holds 7)."""
MAX_META_DEPTH = 32
"""Deepest nesting of lists and objects the ``meta`` of a weights file may have (provenance is flat)."""


@dataclasses.dataclass(frozen=True)
class PolicyWeights:
    """An actor network: hidden dense layers, then the action layer (weights are ``(out, in)``)."""

    hidden: tuple[tuple[np.ndarray, np.ndarray], ...]
    action: tuple[np.ndarray, np.ndarray]
    activation: str
    meta: dict[str, Any]

    @property
    def obs_size(self) -> int:
        """Observation entries the network reads (the first ones of the vector)."""
        first = self.hidden[0][0] if self.hidden else self.action[0]
        return int(first.shape[1])

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Action logits (float32) for an observation vector or an ``(n, size)`` batch; entries past ``obs_size``
        (fields of a later observation version) are not read.

        Computed by the compiled ``forward_rows``, which skips the zero entries of each layer's input (most of the
        observation, about half of each hidden layer after ``relu``): the logits of the dense products
        ``x @ W.T + b`` within float32 rounding, and a row's logits do not depend on the batch it is in."""
        x = np.asarray(observations, dtype=np.float32)
        if x.ndim not in (1, 2) or x.shape[-1] < self.obs_size:
            raise ValueError(
                f"observations: expected a vector or a batch of rows of at least {self.obs_size} entries, "
                f"got shape {x.shape}"
            )
        rows = np.ascontiguousarray(x.reshape(-1, x.shape[-1]))
        packed = self.packed
        out = np.empty((rows.shape[0], packed.weights[-1].shape[1]), dtype=np.float32)
        forward_rows(packed.weights, packed.biases, packed.tanh, rows, out)
        return out[0] if x.ndim == 1 else out

    def dense_logits(self, observations: np.ndarray) -> np.ndarray:
        """``logits`` by the plain dense products in numpy (the definition the compiled pass is held to)."""
        x = np.asarray(observations, dtype=np.float32)[..., : self.obs_size]
        for weight, bias in self.hidden:
            x = x @ weight.T + bias
            x = np.maximum(x, 0.0, out=x) if self.activation == "relu" else np.tanh(x, out=x)
        weight, bias = self.action
        return x @ weight.T + bias

    @functools.cached_property
    def packed(self) -> PackedPolicy:
        """The layers laid out for ``forward_row`` (built on first use, kept with these weights)."""
        return pack_layers([*self.hidden, self.action], self.activation)

    def arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for k, (weight, bias) in enumerate(self.hidden):
            out[f"layers.{k}.weight"], out[f"layers.{k}.bias"] = weight, bias
        out["action.weight"], out["action.bias"] = self.action
        return out


class PackedPolicy(NamedTuple):
    """The layers of an actor laid out for the compiled forward pass (``forward_row``).

    ``weights[k]`` is layer ``k``'s weight transposed, ``(in, out)`` and row-major, so that the weights leaving one
    input are contiguous; ``biases[k]`` its bias; ``tanh`` picks the hidden activation (``relu`` otherwise);
    ``width`` is the widest layer's output and ``inputs`` the widest layer's input (the sizes of the scratch)."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    tanh: bool
    width: int
    inputs: int

    def scratch(self) -> tuple[np.ndarray, np.ndarray]:
        """Fresh scratch for ``forward_row``: the hidden activations ``(2, width)`` and the nonzero inputs' list."""
        return np.empty((2, self.width), dtype=np.float32), np.empty(self.inputs, dtype=np.int64)


def pack_layers(layers: list[tuple[np.ndarray, np.ndarray]], activation: str) -> PackedPolicy:
    """``PackedPolicy`` of dense layers ``(weight (out, in), bias (out,))``, the last one without activation."""
    weights = tuple(np.ascontiguousarray(np.asarray(w, dtype=np.float32).T) for w, _ in layers)
    biases = tuple(np.ascontiguousarray(b, dtype=np.float32) for _, b in layers)
    return PackedPolicy(
        weights,
        biases,
        activation == "tanh",
        max(w.shape[1] for w in weights),
        max(w.shape[0] for w in weights),
    )


@njit(cache=True)
def forward_row(
    weights: tuple[np.ndarray, ...],
    biases: tuple[np.ndarray, ...],
    tanh: bool,
    x: np.ndarray,
    hidden: np.ndarray,
    nonzero: np.ndarray,
    out: np.ndarray,
) -> None:
    """Logits of one observation ``x`` (float32, at least the first layer's inputs) into ``out``; ``hidden`` and
    ``nonzero`` are ``PackedPolicy.scratch()``. Each layer lists the nonzero entries of its input (a branch-free
    scan), starts from its bias and adds, for every nonzero input ``v`` at ``k``, ``v`` times the weights leaving
    ``k``: the cost is the nonzeros times the layer's width, not the full product (the observation is about 93%
    zeros; a hidden layer's input after ``relu`` half or more)."""
    last = len(weights) - 1
    src = x
    for layer in range(last + 1):
        weight = weights[layer]
        n_in, n_out = weight.shape
        count = 0
        for k in range(n_in):
            nonzero[count] = k
            count += src[k] != 0.0
        dst = out if layer == last else hidden[layer % 2]
        bias = biases[layer]
        for j in range(n_out):
            dst[j] = bias[j]
        for q in range(count):
            k = nonzero[q]
            v = src[k]
            row = weight[k]
            for j in range(n_out):
                dst[j] += v * row[j]
        if layer < last:
            if tanh:
                for j in range(n_out):
                    dst[j] = np.tanh(dst[j])
            else:
                for j in range(n_out):
                    dst[j] = max(dst[j], np.float32(0.0))
        src = dst


@njit(cache=True)
def forward_rows(
    weights: tuple[np.ndarray, ...], biases: tuple[np.ndarray, ...], tanh: bool, rows: np.ndarray, out: np.ndarray
) -> None:
    """``forward_row`` of every row of ``rows`` (``(n, size)`` float32) into ``out`` (``(n, actions)``)."""
    width, inputs = 0, 0
    for w in weights:
        inputs, width = max(inputs, w.shape[0]), max(width, w.shape[1])
    hidden = np.empty((2, width), dtype=np.float32)
    nonzero = np.empty(inputs, dtype=np.int64)
    for i in range(rows.shape[0]):
        forward_row(weights, biases, tanh, rows[i], hidden, nonzero, out[i])


def save_policy(path: str | Path, weights: PolicyWeights) -> Path:
    """Write ``weights`` in the ``.npz`` format of this module; the path gets a ``.npz`` suffix if it lacks one."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    if weights.obs_size not in VERSION_SIZES.values():
        raise ValueError(
            f"the network reads {weights.obs_size} observation entries; an observation version has "
            f"one of {sorted(VERSION_SIZES.values())}"
        )
    arrays = {name: np.ascontiguousarray(a, dtype=np.float32) for name, a in weights.arrays().items()}
    for name, array in arrays.items():
        # load_policy refuses such a file, so writing it would only replace a working policy with an unusable one
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{path}: not written, {name} holds non-finite numbers (NaN or infinity)")
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        **weights.meta,
        "format": FORMAT,
        "version": VERSION,
        "obs_size": weights.obs_size,
        "num_actions": NUM_ACTIONS,
        "activation": weights.activation,
    }
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    with replacing(path, suffix=".npz") as tmp:
        np.savez_compressed(tmp, **arrays)  # type: ignore[arg-type]  # numpy's stub mistypes **kwds
    return path


def read_weights_file(
    path: Path, fmt: str, version: int, what: str = "policy"
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and the ``meta`` dictionary of an ``.npz`` weights file of format ``fmt`` and ``version`` (the
    policy files of this module, the value files of ``agents.search.value``: ``what`` names the kind in the
    errors); ``ValueError`` naming the file and the problem if it is not one. The entries are checked before
    anything is allocated (``_check_entries``)."""
    try:
        _check_entries(path)
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: np.asarray(data[name]) for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise ValueError(f"{path}: not a readable .npz {what} file ({type(e).__name__}: {e})") from None
    try:
        meta = json.loads(str(arrays.pop("meta")))
    except (KeyError, json.JSONDecodeError, RecursionError):
        raise ValueError(f"{path}: no valid 'meta' entry; is this a {fmt} file?") from None
    if _depth(meta) > MAX_META_DEPTH:
        raise ValueError(f"{path}: 'meta' is nested more than {MAX_META_DEPTH} levels deep; is this a {fmt} file?")
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        raise ValueError(
            f"{path}: meta format is {meta.get('format') if isinstance(meta, dict) else meta!r}, expected {fmt!r}"
        )
    if meta.get("version") != version:
        raise ValueError(f"{path}: format version {meta.get('version')!r}; this bourre-rl reads version {version}")
    return arrays, meta


def _depth(value: Any) -> int:
    """How deep lists and objects nest in a JSON value, without recursion (a hostile file may nest thousands)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= MAX_META_DEPTH:  # past it the answer is known: no need to walk the rest
                stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _dense_layer(arrays: dict[str, np.ndarray], prefix: str, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``prefix.weight`` ``(out, in)`` and ``prefix.bias`` ``(out,)`` taken out of ``arrays`` as float32, checked
    (shapes, floating-point, finite); ``ValueError`` naming ``path`` otherwise."""
    try:
        weight, bias = arrays.pop(f"{prefix}.weight"), arrays.pop(f"{prefix}.bias")
    except KeyError:
        raise ValueError(f"{path}: missing {prefix}.weight or {prefix}.bias") from None
    if weight.ndim != 2 or bias.shape != (weight.shape[0],):
        raise ValueError(
            f"{path}: {prefix} has weight {weight.shape} and bias {bias.shape}; expected (out, in) and (out,)"
        )
    if weight.dtype.kind != "f" or bias.dtype.kind != "f":
        raise ValueError(
            f"{path}: {prefix} has weight of dtype {weight.dtype} and bias of dtype {bias.dtype}; "
            f"expected floating-point numbers"
        )
    with np.errstate(over="ignore"):  # a float64 weight past float32's range becomes infinite: refused below
        weight, bias = weight.astype(np.float32), bias.astype(np.float32)
    if not (np.all(np.isfinite(weight)) and np.all(np.isfinite(bias))):
        raise ValueError(f"{path}: {prefix} holds non-finite numbers (as float32: NaN, infinity, or past 3.4e38)")
    return weight, bias


def network_layers(
    arrays: dict[str, np.ndarray], path: Path, head: str, inputs: int, outputs: int
) -> tuple[tuple[tuple[np.ndarray, np.ndarray], ...], tuple[np.ndarray, np.ndarray]]:
    """The dense layers of a weights file's ``arrays`` (all of them taken out): the hidden ``layers.K`` in order, then
    the output layer ``head``, each checked (``_dense_layer``) and each taking what the one before gives, from
    ``inputs`` entries to ``outputs``; ``ValueError`` naming ``path`` and the problem otherwise."""
    hidden: list[tuple[np.ndarray, np.ndarray]] = []
    while f"layers.{len(hidden)}.weight" in arrays:
        hidden.append(_dense_layer(arrays, f"layers.{len(hidden)}", path))
    last = _dense_layer(arrays, head, path)
    if arrays:
        names = sorted(arrays)
        more = f" and {len(names) - 5} more" if len(names) > 5 else ""
        raise ValueError(f"{path}: unexpected entries {names[:5]}{more}")
    width = inputs
    for k, (weight, _) in enumerate([*hidden, last]):
        if weight.shape[1] != width:
            raise ValueError(f"{path}: layer {k} takes {weight.shape[1]} inputs, the layer before gives {width}")
        width = weight.shape[0]
    if width != outputs:
        raise ValueError(f"{path}: the {head} layer gives {width} outputs, expected {outputs}")
    return tuple(hidden), last


def load_policy(path: str | Path) -> PolicyWeights:
    """Read an exported policy; ``ValueError`` naming the file and the problem if it is not a valid one."""
    path = Path(path)
    check_readable_file(path, "policy file", NO_POLICY_HINT)
    arrays, meta = read_weights_file(path, FORMAT, VERSION)
    activation = meta.get("activation")
    if activation not in _ACTIVATIONS:
        raise ValueError(f"{path}: activation {activation!r}, expected one of {_ACTIVATIONS}")
    obs_size = meta.get("obs_size")
    if obs_size not in VERSION_SIZES.values() or meta.get("num_actions") != NUM_ACTIONS:
        raise ValueError(
            f"{path}: made for observations of {obs_size} and {meta.get('num_actions')} actions; this "
            f"env has observations of {sorted(VERSION_SIZES.values())} (by version) and {NUM_ACTIONS}"
        )
    hidden, action = network_layers(arrays, path, "action", int(meta["obs_size"]), NUM_ACTIONS)
    return PolicyWeights(hidden, action, activation, meta)


def _check_entries(path: Path) -> None:
    """``ValueError`` unless every entry of the archive is an ``.npy`` array whose header claims no more data than
    the entry holds, all within ``MAX_POLICY_BYTES``: numpy allocates what a header claims before reading, so a
    tiny forged file could otherwise ask for any amount of memory."""
    total = 0
    with zipfile.ZipFile(path) as archive:
        entries = archive.infolist()
        if len(entries) > MAX_ENTRIES:  # refused before any entry is opened: each costs a read
            raise ValueError(f"{len(entries):,} entries, more than a weights file holds ({MAX_ENTRIES})")
        for info in entries:
            if not info.filename.endswith(".npy"):
                raise ValueError(f"entry {info.filename!r} is not a numpy array")
            with archive.open(info) as f:
                version = np.lib.format.read_magic(f)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(f)
                elif version == (2, 0):
                    shape, _, dtype = np.lib.format.read_array_header_2_0(f)
                else:
                    raise ValueError(f"entry {info.filename!r}: .npy format version {version} is not supported")
                held = info.file_size - f.tell()
            if dtype.hasobject:
                raise ValueError(f"entry {info.filename!r} holds Python objects")
            claimed = math.prod(shape) * dtype.itemsize
            if claimed > held:
                raise ValueError(
                    f"entry {info.filename!r} claims {shape} {dtype} ({claimed:,} bytes) but holds {held:,} bytes"
                )
            total += claimed
            if total > MAX_POLICY_BYTES:
                raise ValueError(f"the arrays take more than MAX_POLICY_BYTES ({MAX_POLICY_BYTES:,} bytes)")


class PPOAgent:
    """Plays an exported policy: the most probable legal action, or a sample from the masked softmax."""

    def __init__(
        self, policy: PolicyWeights | str | Path, seed: int | None = 0, sample: bool = False, name: str = "ppo"
    ) -> None:
        self.policy = policy if isinstance(policy, PolicyWeights) else load_policy(policy)
        self.sample = sample
        self.rng = np.random.default_rng(seed)
        self.name = name

    def reset(self) -> None:
        """The policy has no memory between deals."""

    def act(self, observation: Observation) -> int:
        legal = legal_actions(observation)
        logits = self.policy.logits(observation["observation"])[legal]
        if not self.sample:
            return int(legal[int(np.argmax(logits))])
        p = np.exp(logits - logits.max())
        return int(self.rng.choice(legal, p=p / p.sum()))

    __call__ = act


_CACHE_SIZE = 8
_cache: collections.OrderedDict[tuple[str, int, int, int], PolicyWeights] = collections.OrderedDict()


def cached_policy(path: str | Path) -> PolicyWeights:
    """``load_policy(path)``, read and checked once per process while the file stays the same.

    An evaluation builds its agents per chunk of deals and per seat, so without this a policy file would be read
    and checked once per agent (125 times in 500 deals at 5 players). The file is known by its resolved path,
    inode, size and modification time: a policy rewritten in place (a training run's ``eval_policy.npz``) is read
    again. The arrays are read-only, since every agent of the process shares them."""
    try:
        stat = Path(path).stat()
        key = (str(Path(path).resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    except OSError:
        return load_policy(path)  # its message says what is wrong
    weights = _cache.get(key)
    if weights is None:
        weights = load_policy(path)
        for array in weights.arrays().values():
            array.flags.writeable = False
        _cache[key] = weights
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    _cache.move_to_end(key)
    return dataclasses.replace(weights, meta=dict(weights.meta))  # the arrays shared, the provenance each its own


def make_ppo(variant: str | None, seed: int | None) -> PPOAgent:
    """``agents.make("ppo")``: the shipped model; ``agents.make("ppo:PATH")``: the policy at ``PATH``."""
    if not variant and not SHIPPED_MODEL.is_file():
        raise ValueError(
            f"the shipped model {SHIPPED_MODEL} is missing from this installation; reinstall bourre-rl, "
            f"or give a policy file: agents.make('ppo:PATH')"
        )
    path = Path(variant) if variant else SHIPPED_MODEL
    return PPOAgent(cached_policy(path), seed=seed, name=f"ppo:{variant}" if variant else "ppo")
