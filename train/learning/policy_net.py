"""The trainers' network: sparse observation batches and their storage, the actor-critic, masking.

Every trainer of ``train/`` that trains a network of its own builds it here: the batched PPO trainer
(``train.ppo``), Deep Monte-Carlo (``train.dmc``, whose Q-values are the actor's outputs), expert iteration
(``train.exit``); MaskablePPO's shared trunk (``train.sb3.trunk``) and the value fit of the search
(``train.research.value_fit``) are built from its layers.

``PolicyNet``
    A multilayer perceptron whose first layer reads the observation sparsely. The observation is
    1174 floats of which about 66 are nonzero at 5 players (mostly one-hot), so the first dense
    product ``W x`` is computed as the sum over the nonzero entries ``i`` of ``x_i * W[:, i]``
    (``torch.nn.functional.embedding_bag``, with a backward pass of the same kind: ``_SparseFirst``).
    The weights stay a dense matrix, so the actor exports to the ``agents.ppo`` format unchanged
    (``layers.K.weight`` of shape ``(out, in)``). The trunk is shared by the actor head (117 logits)
    and the critic head (one value), unless the critic is privileged: then ``ValueNet``, a trunk of its
    own, reads the observation and the other seats' hands (``bourre_env.privileged``; training only).
``SparseBatch``
    A batch of rows as bags of (column, value) entries, built from dense observations (``sparse_rows``)
    or from compressed sparse rows (``gather_batch``), with the entries also sorted by column when a
    gradient is needed.
``SparseStore``
    Rows of sparse features kept as compressed sparse rows, growing as rows are added: the decisions a
    trainer keeps for its update (``gather_batch`` makes a ``SparseBatch`` of any of them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import numpy as np
import torch
from numba import njit
from torch.nn import functional

from agents.ppo import PolicyWeights
from bourre_env.core import NUM_ACTIONS
from bourre_env.observation import OBS_SIZE
from bourre_env.privileged import HIDDEN_HAND_SIZE

__all__ = [
    "MASKED_LOGIT",
    "PolicyNet",
    "SparseBatch",
    "SparseStore",
    "ValueNet",
    "batch_from_counts",
    "network_bytes",
    "gather_batch",
    "masked_logits",
    "sample_actions",
    "first_layer",
    "sparse_batch_from_dense",
    "sparse_first_layer",
    "sparse_rows",
]

MASKED_LOGIT = -1e9
"""Logit of an illegal action: its probability is exactly 0 and 0 * logit stays finite in the entropy."""


# ---------------------------------------------------------------------------- sparse observations
@njit(cache=True)
def _sparse_rows(obs: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, width = rows.shape[0], obs.shape[1]
    capacity = n * 128
    idx = np.empty(capacity, np.int16)
    val = np.empty(capacity, np.float32)
    counts = np.zeros(n, np.int64)
    k = 0
    for i in range(n):
        if k + width > capacity:
            capacity = max(2 * capacity, k + width)
            grown_idx = np.empty(capacity, np.int16)
            grown_idx[:k] = idx[:k]
            idx = grown_idx
            grown_val = np.empty(capacity, np.float32)
            grown_val[:k] = val[:k]
            val = grown_val
        r = obs[rows[i]]
        start = k
        for j in range(width):
            # written always, kept only when nonzero: no branch in the scan (twice as fast as testing first)
            x = r[j]
            idx[k] = j
            val[k] = x
            k += x != 0.0
        counts[i] = k - start
    return idx[:k].copy(), val[:k].copy(), counts


def sparse_rows(obs: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nonzero entries of ``obs[rows]`` as (column int16, value float32, count per row int64), row by row."""
    if obs.shape[1] > np.iinfo(np.int16).max:
        raise ValueError(f"observations of {obs.shape[1]} entries do not fit int16 column indices")
    return _sparse_rows(obs, np.ascontiguousarray(rows, dtype=np.int64))


@njit(cache=True)
def _gather(
    ptr: np.ndarray, idx: np.ndarray, val: np.ndarray, rows: np.ndarray, num_features: int, transpose: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n = rows.shape[0]
    offsets = np.empty(n, np.int64)
    total = 0
    for i in range(n):
        offsets[i] = total
        total += ptr[rows[i] + 1] - ptr[rows[i]]
    out_idx = np.empty(total, np.int64)
    out_val = np.empty(total, np.float32)
    k = 0
    for i in range(n):
        for q in range(ptr[rows[i]], ptr[rows[i] + 1]):
            out_idx[k] = idx[q]
            out_val[k] = val[q]
            k += 1
    if not transpose:
        empty = np.empty(0, np.int64)
        return out_idx, out_val, offsets, empty, np.empty(0, np.float32), empty
    t_rows, t_val, t_off = _by_column(out_idx, out_val, offsets, num_features)
    return out_idx, out_val, offsets, t_rows, t_val, t_off


@njit(cache=True)
def _by_column(
    idx: np.ndarray, val: np.ndarray, offsets: np.ndarray, num_features: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # The entries of the bags by column (a counting sort): the first layer's weight gradient is then a weighted sum
    # of rows of the output gradient per column, which embedding_bag computes as fast as the forward pass.
    n, total = offsets.shape[0], idx.shape[0]
    t_off = np.zeros(num_features + 1, np.int64)
    for k in range(total):
        t_off[idx[k] + 1] += 1
    for j in range(num_features):
        t_off[j + 1] += t_off[j]
    fill = t_off[:num_features].copy()
    t_rows = np.empty(total, np.int64)
    t_val = np.empty(total, np.float32)
    for i in range(n):
        end = offsets[i + 1] if i + 1 < n else total
        for k in range(offsets[i], end):
            j = idx[k]
            t_rows[fill[j]] = i
            t_val[fill[j]] = val[k]
            fill[j] += 1
    return t_rows, t_val, t_off[:num_features].copy()


def _bags_from_dense(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    idx, val, counts = sparse_rows(obs, np.arange(obs.shape[0]))
    return idx.astype(np.int64), val, np.cumsum(counts) - counts


class SparseBatch(NamedTuple):
    """A batch of observations as bags of (column, value) entries, for ``PolicyNet``."""

    idx: torch.Tensor  # (nnz,) int64 columns, row after row
    val: torch.Tensor  # (nnz,) float32 values
    offsets: torch.Tensor  # (rows,) int64 start of each row in idx
    t_rows: torch.Tensor | None  # the same entries by column, for the backward pass (None: no gradient needed)
    t_val: torch.Tensor | None
    t_offsets: torch.Tensor | None

    @property
    def rows(self) -> int:
        return int(self.offsets.shape[0])


def gather_batch(
    ptr: np.ndarray,
    idx: np.ndarray,
    val: np.ndarray,
    rows: np.ndarray,
    device: torch.device | str,
    grad: bool,
    num_features: int = OBS_SIZE,
) -> SparseBatch:
    """Rows ``rows`` of a CSR store (``ptr``, ``idx``, ``val``) as a ``SparseBatch`` on ``device``; with ``grad``
    also by column, for the backward pass of the first layer."""
    parts = _gather(ptr, idx, val, np.ascontiguousarray(rows, dtype=np.int64), num_features, grad)
    idx_t, val_t, off_t, t_rows, t_val, t_off = (torch.from_numpy(a).to(device) for a in parts)
    if not grad:
        return SparseBatch(idx_t, val_t, off_t, None, None, None)
    return SparseBatch(idx_t, val_t, off_t, t_rows, t_val, t_off)


def sparse_batch_from_dense(obs: torch.Tensor, grad: bool) -> SparseBatch:
    """The rows of a dense ``(rows, features)`` tensor as a ``SparseBatch`` on its device (for callers that are
    handed dense observations, as SB3's policies are); with ``grad`` also by column, for the backward pass of the
    first layer. On the CPU a compiled scan; elsewhere torch's own operations."""
    if obs.device.type == "cpu":
        idx, val, offsets = _bags_from_dense(np.ascontiguousarray(obs.detach().numpy(), dtype=np.float32))
        idx_t, val_t, off_t = torch.from_numpy(idx), torch.from_numpy(val), torch.from_numpy(offsets)
        if not grad:
            return SparseBatch(idx_t, val_t, off_t, None, None, None)
        t_rows, t_val, t_off = _by_column(idx, val, offsets, obs.shape[1])
        return SparseBatch(
            idx_t, val_t, off_t, torch.from_numpy(t_rows), torch.from_numpy(t_val), torch.from_numpy(t_off)
        )
    return _sparse_batch_torch(obs, grad)


def _sparse_batch_torch(obs: torch.Tensor, grad: bool) -> SparseBatch:
    rows, cols = obs.nonzero(as_tuple=True)  # row-major: the entries of each row together, by column
    val_t = obs[rows, cols]
    counts = torch.bincount(rows, minlength=obs.shape[0])
    offsets_t = torch.cumsum(counts, 0) - counts
    if not grad:
        return SparseBatch(cols, val_t, offsets_t, None, None, None)
    by_column = torch.argsort(cols, stable=True)  # the same entries, column after column
    t_counts = torch.bincount(cols, minlength=obs.shape[1])
    return SparseBatch(cols, val_t, offsets_t, rows[by_column], val_t[by_column], torch.cumsum(t_counts, 0) - t_counts)


def batch_from_counts(idx: np.ndarray, val: np.ndarray, counts: np.ndarray, device: torch.device | str) -> SparseBatch:
    """A ``SparseBatch`` (no gradient) from ``sparse_rows``' output."""
    offsets = np.zeros(len(counts), np.int64)
    np.cumsum(counts[:-1], out=offsets[1:])
    return SparseBatch(
        torch.from_numpy(idx.astype(np.int64)).to(device),
        torch.from_numpy(val).to(device),
        torch.from_numpy(offsets).to(device),
        None,
        None,
        None,
    )


# ---------------------------------------------------------------------------- the network
class _SparseFirst(torch.autograd.Function):
    """``x @ W`` for sparse ``x`` given as bags; ``weight`` is ``W`` as (features, width)."""

    @staticmethod
    def forward(
        ctx: Any,
        weight: torch.Tensor,
        batch_idx: torch.Tensor,
        batch_val: torch.Tensor,
        offsets: torch.Tensor,
        t_rows: torch.Tensor,
        t_val: torch.Tensor,
        t_offsets: torch.Tensor,
    ) -> torch.Tensor:
        ctx.save_for_backward(t_rows, t_val, t_offsets)
        return functional.embedding_bag(batch_idx, weight, offsets, mode="sum", per_sample_weights=batch_val)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        # torch's own embedding_bag backward sorts the indices on every call and costs as much as the rest of
        # the network; the batch arrives sorted by column already (SparseBatch.t_*).
        t_rows, t_val, t_offsets = ctx.saved_tensors
        weight_grad = functional.embedding_bag(t_rows, grad, t_offsets, mode="sum", per_sample_weights=t_val)
        return weight_grad, None, None, None, None, None, None


def first_layer(inputs: int, width: int) -> tuple[torch.nn.Parameter, torch.nn.Parameter]:
    """Weight ``(inputs, width)`` and bias of a sparse first layer, initialised as torch's dense layer would be."""
    first = torch.nn.Linear(inputs, width)
    return (torch.nn.Parameter(first.weight.detach().t().contiguous()), torch.nn.Parameter(first.bias.detach().clone()))


def sparse_first_layer(weight: torch.Tensor, batch: SparseBatch) -> torch.Tensor:
    """``x @ weight`` for the sparse rows ``x`` of ``batch`` (no bias)."""
    if batch.t_rows is not None and torch.is_grad_enabled():
        return cast(
            torch.Tensor,
            _SparseFirst.apply(weight, batch.idx, batch.val, batch.offsets, batch.t_rows, batch.t_val, batch.t_offsets),
        )
    return functional.embedding_bag(batch.idx, weight, batch.offsets, mode="sum", per_sample_weights=batch.val)


class ValueNet(torch.nn.Module):
    """The privileged critic: its own trunk over the observation and the other seats' hands
    (``bourre_env.privileged``), for training only; the policy never reads it (``PolicyNet.value_net``)."""

    def __init__(self, hidden: Sequence[int], obs_size: int = OBS_SIZE, hidden_hand_size: int = HIDDEN_HAND_SIZE):
        super().__init__()
        weight, self.first_bias = first_layer(obs_size + hidden_hand_size, hidden[0])  # one (obs + hands)-wide layer
        self.obs_weight = torch.nn.Parameter(weight.detach()[:obs_size].clone())
        self.hand_weight = torch.nn.Parameter(weight.detach()[obs_size:].clone())
        self.layers = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(hidden[:-1], hidden[1:], strict=True))
        self.head = torch.nn.Linear(hidden[-1], 1)

    def forward(self, batch: SparseBatch, hidden_batch: SparseBatch) -> torch.Tensor:
        if hidden_batch.rows != batch.rows:
            raise ValueError(f"{batch.rows} observation rows but {hidden_batch.rows} hidden-hand rows")
        h = functional.relu(
            sparse_first_layer(self.obs_weight, batch)
            + sparse_first_layer(self.hand_weight, hidden_batch)
            + self.first_bias
        )
        for layer in self.layers:
            h = functional.relu(layer(h))
        return cast(torch.Tensor, self.head(h).squeeze(-1))


def network_bytes(
    hidden: Sequence[int], privileged_critic: bool = False, snapshots: int = 0, obs_size: int = OBS_SIZE
) -> int:
    """About the memory training a ``PolicyNet`` of these layers takes: float32 weights, their gradients and Adam's
    two moments (4 copies), the temporary of the first update twice over, and ``snapshots`` frozen copies in the
    opponent pool; computed from the widths, before anything is allocated."""
    widths = [obs_size, *(int(w) for w in hidden)]
    trunk = sum((a + 1) * b for a, b in zip(widths[:-1], widths[1:], strict=True))
    weights = trunk + (widths[-1] + 1) * (NUM_ACTIONS + 1)
    if privileged_critic:
        weights += trunk + HIDDEN_HAND_SIZE * widths[1] + widths[-1] + 1
    return 4 * weights * (6 + snapshots)


class PolicyNet(torch.nn.Module):
    """Actor and critic on one trunk: a sparse first layer then dense ReLU layers (see the module docstring)."""

    def __init__(
        self,
        hidden: Sequence[int],
        obs_size: int = OBS_SIZE,
        num_actions: int = NUM_ACTIONS,
        privileged_critic: bool = False,
    ) -> None:
        super().__init__()
        if not hidden or any(w < 1 for w in hidden):
            raise ValueError(f"hidden: positive layer widths, got {tuple(hidden)}")
        self.hidden_sizes = tuple(int(w) for w in hidden)
        self.first_weight, self.first_bias = first_layer(obs_size, hidden[0])
        self.layers = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(hidden[:-1], hidden[1:], strict=True))
        self.actor = torch.nn.Linear(hidden[-1], num_actions)
        self.critic = torch.nn.Linear(hidden[-1], 1)
        self.value_net = ValueNet(hidden, obs_size) if privileged_critic else None
        with torch.no_grad():  # a near-uniform first policy (CleanRL's small actor head)
            self.actor.weight.mul_(0.01)
            self.actor.bias.zero_()

    @property
    def obs_size(self) -> int:
        return int(self.first_weight.shape[0])

    @property
    def dense_layers(self) -> list[torch.nn.Linear]:
        """The hidden layers after the first, in order."""
        return [cast(torch.nn.Linear, layer) for layer in self.layers]

    def features(self, batch: SparseBatch) -> torch.Tensor:
        h = functional.relu(sparse_first_layer(self.first_weight, batch) + self.first_bias)
        for layer in self.layers:
            h = functional.relu(layer(h))
        return h

    def forward(self, batch: SparseBatch, hidden_batch: SparseBatch | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Unmasked action logits ``(rows, actions)`` and values ``(rows,)``. With a privileged critic
        (``value_net``) the values come from it and need ``hidden_batch``, the rows' hidden-hand features; the
        logits never depend on them."""
        h = self.features(batch)
        if self.value_net is None:
            return self.actor(h), self.critic(h).squeeze(-1)
        if hidden_batch is None:
            raise ValueError("this network's critic reads the hidden hands: pass hidden_batch")
        return self.actor(h), self.value_net(batch, hidden_batch)

    def policy_weights(self, meta: dict[str, Any]) -> PolicyWeights:
        """The actor as ``agents.ppo.PolicyWeights`` (dense layers, ``(out, in)`` weights)."""

        def numpy(t: torch.Tensor) -> np.ndarray:
            return t.detach().cpu().numpy().astype(np.float32, copy=True)

        hidden = [(numpy(self.first_weight.t()), numpy(self.first_bias))]
        hidden += [(numpy(layer.weight), numpy(layer.bias)) for layer in self.dense_layers]
        return PolicyWeights(tuple(hidden), (numpy(self.actor.weight), numpy(self.actor.bias)), "relu", meta)

    @classmethod
    def from_policy_weights(cls, weights: PolicyWeights) -> PolicyNet:
        """A network playing an exported actor (its critic is left at its initial weights, unused)."""
        _check_relu(weights)
        net = cls([w.shape[0] for w, _ in weights.hidden], obs_size=weights.obs_size)
        net.load_actor(weights)
        return net

    def load_actor(self, weights: PolicyWeights) -> None:
        """Copy an exported actor (trunk and action head) into this network; the critic keeps its weights.
        ``ValueError`` if the layer widths or the observation size differ."""
        _check_relu(weights)
        widths = tuple(int(w.shape[0]) for w, _ in weights.hidden)
        if (
            widths != self.hidden_sizes
            or weights.obs_size != self.obs_size
            or weights.action[0].shape[0] != self.actor.out_features
        ):
            raise ValueError(
                f"the policy has layers {widths} over {weights.obs_size} inputs and "
                f"{weights.action[0].shape[0]} actions; this network has {self.hidden_sizes} over "
                f"{self.obs_size} and {self.actor.out_features}"
            )
        with torch.no_grad():
            self.first_weight.copy_(torch.from_numpy(weights.hidden[0][0].T.copy()))
            self.first_bias.copy_(torch.from_numpy(weights.hidden[0][1]))
            for layer, (w, b) in zip(self.dense_layers, weights.hidden[1:], strict=True):
                layer.weight.copy_(torch.from_numpy(w))
                layer.bias.copy_(torch.from_numpy(b))
            self.actor.weight.copy_(torch.from_numpy(weights.action[0]))
            self.actor.bias.copy_(torch.from_numpy(weights.action[1]))


def _check_relu(weights: PolicyWeights) -> None:
    if weights.activation != "relu" or not weights.hidden:
        raise ValueError(
            f"a policy for this trainer must be a ReLU network with hidden layers, got "
            f"{weights.activation!r} with {len(weights.hidden)} hidden layers"
        )


def masked_logits(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    return logits.masked_fill(~masks, MASKED_LOGIT)


def sample_actions(masked: torch.Tensor, legal: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row from the softmax of ``masked`` logits, by inverting the cumulative distribution with one
    uniform per row (four times faster than Gumbel noise on every logit). An illegal action has probability 0, a
    step of 0 in the cumulative sum, so it is never the first entry above the uniform."""
    cumulative = torch.softmax(masked, dim=1).cumsum(dim=1)
    u = torch.rand((masked.shape[0], 1), generator=generator, device=masked.device) * cumulative[:, -1:]
    actions = torch.searchsorted(cumulative, u, right=True).squeeze(1)
    # u can round up to the total: then the last legal action, not the index past the end
    last_legal = legal.shape[1] - 1 - legal.flip(1).to(torch.uint8).argmax(dim=1)
    return torch.minimum(actions, last_legal)


class SparseStore:
    """Rows of sparse features as compressed sparse rows (int16 column, float32 value): row ``i`` is entries
    ``ptr[i]:ptr[i + 1]``. Arrays grow as needed; ``n`` rows are held."""

    def __init__(self, num_features: int, capacity: int = 1 << 14, nnz_per_row: int = 80) -> None:
        if num_features > np.iinfo(np.int16).max:
            raise ValueError(f"{num_features} features do not fit int16 column indices")
        self.num_features = num_features
        self.n = 0
        self.ptr = np.zeros(capacity + 1, np.int64)
        self.idx = np.zeros(capacity * nnz_per_row, np.int16)
        self.val = np.zeros(capacity * nnz_per_row, np.float32)

    def append(self, idx: np.ndarray, val: np.ndarray, counts: np.ndarray) -> None:
        """Add ``len(counts)`` rows, given as ``sparse_rows`` gives them."""
        rows, end = len(counts), int(self.ptr[self.n])
        if self.n + rows + 1 > len(self.ptr):
            ptr = np.zeros(max(2 * len(self.ptr), self.n + rows + 1), np.int64)
            ptr[: self.n + 1] = self.ptr[: self.n + 1]
            self.ptr = ptr
        if end + len(idx) > len(self.idx):
            size = max(2 * len(self.idx), end + len(idx))
            for name in ("idx", "val"):
                old = getattr(self, name)
                new = np.zeros(size, old.dtype)
                new[:end] = old[:end]
                setattr(self, name, new)
        self.idx[end : end + len(idx)] = idx
        self.val[end : end + len(idx)] = val
        np.cumsum(counts, out=self.ptr[self.n + 1 : self.n + rows + 1])
        self.ptr[self.n + 1 : self.n + rows + 1] += end
        self.n += rows

    def keep(self, kept: np.ndarray) -> None:
        """Keep only rows ``kept`` (increasing indices), in order."""
        counts = self.ptr[kept + 1] - self.ptr[kept]
        entries = np.repeat(self.ptr[kept] - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(
            counts.sum()
        )
        self.idx[: len(entries)] = self.idx[entries]
        self.val[: len(entries)] = self.val[entries]
        self.ptr[0] = 0
        np.cumsum(counts, out=self.ptr[1 : len(kept) + 1])
        self.n = len(kept)

    def batch(self, rows: np.ndarray, device: torch.device | str, grad: bool) -> SparseBatch:
        return gather_batch(self.ptr, self.idx, self.val, rows, device, grad, self.num_features)
