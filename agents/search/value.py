"""A learned value of a position, for rollouts that stop at a depth instead of at the end of the deal.

A ``pimc`` search with ``cut=D,value=ppo:PATH`` plays its rollouts with the greedy policy (``rollout=ppo``) as
before, but stops a world when the searcher is to play a card ``D`` tricks after the one it searched, and adds
the value file's estimate of the chips it still makes this deal (``cut_rollouts``). A world whose deal ends
first is settled exactly. The cut saves the forward passes of the tricks after the cut; the price is the
estimate's error.

The value network reads what the searcher would know if the world were the truth: its own observation (the
``OBS_SIZE`` entries of ``bourre_env.observation``) and then the other seats' hands, in the layout of
``bourre_env.privileged`` (block ``r - 1`` for the seat ``r`` places after the searcher, card ``c`` of a block
set when that seat holds ``c``). Its output is the searcher's chips from that position to the end of the deal
(``view.reward_of`` at the end minus ``view.reward_of`` now) when every seat plays the policy greedily, which is
what a full rollout measures in the same world. ``python -m train.research.value_fit`` fits one to the greedy
self-play of a policy file.

File format: a plain ``.npz`` read with ``allow_pickle=False``, like the policy files of ``agents.ppo``: hidden
layers ``layers.K.weight`` ``(out, in)`` and ``layers.K.bias``, the output layer ``value.weight`` ``(1, in)`` and
``value.bias``, and ``meta`` (JSON): ``format`` (``"bourre-value"``), ``version``, ``obs_size``, ``hands_size``,
``activation`` (``relu``) and free-form provenance (the policy it was fitted to, the command, the seed, the
fit's error on held-out positions). A missing, corrupt or wrong-shaped file raises ``ValueError``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from agents.ppo import PackedPolicy, forward_row, network_layers, pack_layers, read_weights_file
from agents.search.policy import PolicyModel, deal_over, greedy_action
from bourre_env import core, observation, view
from bourre_env.atomic_files import check_readable_file, replacing
from bourre_env.privileged import HIDDEN_HAND_SIZE

__all__ = ["FORMAT", "INPUT_SIZE", "ValueWeights", "cut_rollouts", "load_value", "save_value", "value_input"]

FORMAT = "bourre-value"
VERSION = 1
INPUT_SIZE = observation.OBS_SIZE + HIDDEN_HAND_SIZE
"""Entries of a value network's input: the observation, then the other seats' hands."""


@dataclasses.dataclass(frozen=True)
class ValueWeights:
    """A value network: hidden dense ReLU layers, then one output (weights are ``(out, in)``)."""

    hidden: tuple[tuple[np.ndarray, np.ndarray], ...]
    head: tuple[np.ndarray, np.ndarray]
    meta: dict[str, Any]

    @functools.cached_property
    def packed(self) -> PackedPolicy:
        """The layers laid out for the compiled forward pass (``agents.ppo.forward_row``)."""
        return pack_layers([*self.hidden, self.head], "relu")

    def values(self, inputs: np.ndarray) -> np.ndarray:
        """The value of each row of ``inputs`` (``(n, INPUT_SIZE)``), float32, by the compiled forward pass."""
        rows = np.ascontiguousarray(np.asarray(inputs, dtype=np.float32).reshape(-1, INPUT_SIZE))
        packed = self.packed
        out = np.empty((rows.shape[0], 1), dtype=np.float32)
        hidden, nonzero = packed.scratch()
        for i in range(rows.shape[0]):
            forward_row(packed.weights, packed.biases, packed.tanh, rows[i], hidden, nonzero, out[i])
        return out[:, 0]

    def dense_values(self, inputs: np.ndarray) -> np.ndarray:
        """``values`` by the plain dense products in numpy (the definition the compiled pass is held to)."""
        x = np.asarray(inputs, dtype=np.float32).reshape(-1, INPUT_SIZE)
        for weight, bias in self.hidden:
            x = np.maximum(x @ weight.T + bias, 0.0)
        weight, bias = self.head
        return (x @ weight.T + bias)[:, 0]


def save_value(path: str | Path, weights: ValueWeights) -> Path:
    """Write ``weights`` in this module's format; the path gets a ``.npz`` suffix if it lacks one."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    arrays: dict[str, np.ndarray] = {}
    for k, (weight, bias) in enumerate(weights.hidden):
        arrays[f"layers.{k}.weight"], arrays[f"layers.{k}.bias"] = weight, bias
    arrays["value.weight"], arrays["value.bias"] = weights.head
    arrays = {name: np.ascontiguousarray(a, dtype=np.float32) for name, a in arrays.items()}
    for name, array in arrays.items():
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{path}: not written, {name} holds non-finite numbers (NaN or infinity)")
    meta = {
        **weights.meta,
        "format": FORMAT,
        "version": VERSION,
        "obs_size": observation.OBS_SIZE,
        "hands_size": HIDDEN_HAND_SIZE,
        "activation": "relu",
    }
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path, suffix=".npz") as tmp:
        np.savez_compressed(tmp, **arrays)  # type: ignore[arg-type]  # numpy's stub mistypes **kwds
    return path


def load_value(path: str | Path) -> ValueWeights:
    """Read a value file; ``ValueError`` naming the file and the problem if it is not a valid one."""
    path = Path(path)
    check_readable_file(path, "value file", " (fit one with python -m train.research.value_fit)")
    arrays, meta = read_weights_file(path, FORMAT, VERSION, "value")
    if meta.get("obs_size") != observation.OBS_SIZE or meta.get("hands_size") != HIDDEN_HAND_SIZE:
        raise ValueError(
            f"{path}: made for inputs of {meta.get('obs_size')} + {meta.get('hands_size')} entries; this env has "
            f"{observation.OBS_SIZE} + {HIDDEN_HAND_SIZE}"
        )
    if meta.get("activation") != "relu":
        raise ValueError(f"{path}: activation {meta.get('activation')!r}, expected 'relu'")
    hidden, head = network_layers(arrays, path, "value", INPUT_SIZE, 1)
    return ValueWeights(hidden, head, meta)


@njit(cache=True)
def value_input(s: np.ndarray, p: np.ndarray, seat: int, out: np.ndarray, mask: np.ndarray, x: np.ndarray) -> None:
    """The value network's input for ``seat`` at state ``s`` into ``out`` (``INPUT_SIZE`` float32): the seat's
    observation, then the other seats' hands (module docstring); ``mask`` and ``x`` as ``observe_with``'s."""
    size, num_players = observation.OBS_SIZE, view.num_players_of(p)
    observation.observe_with(s, p, seat, out[:size], mask, x)
    out[size:] = 0.0
    for r in range(1, num_players):
        hand = view.hand_of(s, (seat + r) % num_players)
        for c in range(core.NUM_CARDS):
            if (hand >> c) & 1:
                out[size + (r - 1) * core.NUM_CARDS + c] = 1.0


@njit(cache=True)
def tricks_done(s: np.ndarray, p: np.ndarray) -> int:
    """Tricks finished so far this deal."""
    done = 0
    for seat in range(view.num_players_of(p)):
        done += view.tricks_of(s, seat)
    return done


@njit(cache=True)
def _cut_rollouts(
    states: np.ndarray,
    p: np.ndarray,
    me: int,
    depth: int,
    policy: tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...], bool],
    value: tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...], bool],
    hidden: np.ndarray,
    nonzero: np.ndarray,
    estimates: np.ndarray,
) -> int:
    """``cut_rollouts``, compiled whole; returns the decisions taken, or ``-1 - b`` if row ``b`` refused an action."""
    inputs = np.zeros(INPUT_SIZE, dtype=np.float32)
    obs = inputs[: observation.OBS_SIZE]
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    x = np.zeros(core.SCRATCH_SIZE, dtype=np.int64)  # the cinch memo of the row being played
    logits = np.empty(core.NUM_ACTIONS, dtype=np.float32)
    out = np.empty(1, dtype=np.float32)
    taken = 0
    for b in range(states.shape[0]):
        s = states[b]
        x[:] = 0
        estimates[b] = 0.0
        stop = tricks_done(s, p) + depth
        while not deal_over(s, me):
            seat = view.to_act(s)
            if seat == me and view.phase_of(s) == core.PLAY and tricks_done(s, p) >= stop:
                value_input(s, p, me, inputs, mask, x)
                forward_row(value[0], value[1], value[2], inputs, hidden, nonzero, out)
                estimates[b] = out[0]
                break
            observation.observe_with(s, p, seat, obs, mask, x)
            best = greedy_action(policy[0], policy[1], policy[2], obs, mask, hidden, nonzero, logits)
            if best < 0 or not core.step_with(s, p, best, x):
                return -1 - b
            taken += 1
    return taken


def cut_rollouts(
    states: np.ndarray, p: np.ndarray, model: PolicyModel, value: ValueWeights, me: int, depth: int
) -> tuple[np.ndarray, int]:
    """Play every row of ``states`` (changed in place) with ``model``'s greedy policy for every seat until seat
    ``me`` is out of the deal, the deal is settled, or ``me`` is to play a card with ``depth`` more tricks
    finished than when the row started; there, the row stops and its estimate is ``value``'s. Returns the
    estimates (float64, 0 for the rows played to their end) and the decisions taken."""
    if me < 0:
        raise ValueError("cut rollouts need the searcher's seat (me >= 0)")
    if depth < 1:
        raise ValueError(f"depth: expected an integer >= 1, got {depth}")
    policy, head = model.weights.packed, value.packed
    width = max(policy.width, head.width)
    hidden = np.empty((2, width), dtype=np.float32)
    nonzero = np.empty(max(policy.inputs, head.inputs), dtype=np.int64)
    estimates = np.zeros(states.shape[0], dtype=np.float32)
    taken = _cut_rollouts(
        states,
        p,
        me,
        depth,
        (policy.weights, policy.biases, policy.tanh),
        (head.weights, head.biases, head.tanh),
        hidden,
        nonzero,
        estimates,
    )
    if taken < 0:
        raise RuntimeError(f"the policy's action was refused in row {-1 - taken} of the rollouts")
    return estimates.astype(np.float64), taken
