"""An exported policy (``agents.ppo``'s file format) inside the search: batched forward passes over many worlds.

``PolicyModel(path)`` wraps the actor network of a policy file (the shipped ``agents/models/ppo.npz`` by default)
for the search agents. Everything here works on batches: ``observe_rows`` encodes, in one compiled call, the
observation and legal mask of the seat to act in every listed row of a batch of core states; ``log_probs`` and
``choose`` run the compiled forward pass (``agents.ppo.forward_row``, which skips the observation's zeros) over all
of those rows; ``policy_rollouts`` plays a batch of worlds to the end of the deal with the policy in every seat
(the kind ``"ppo"`` of ``agents.search.rollout``): greedy play in one compiled call that encodes, runs the network
and steps each row to its end, sampled play one step at a time over the rows still playing.

Greedy play takes the most probable legal action (the first one on a tie), exactly as ``agents.ppo.PPOAgent``
does; ``sample=True`` draws from the masked softmax (Gumbel-max, from the caller's generator).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
from numba import njit

from agents.ppo import NO_POLICY_HINT, SHIPPED_MODEL, PolicyWeights, forward_row, load_policy
from bourre_env import core, observation, view
from bourre_env.atomic_files import check_readable_file

__all__ = ["PolicyModel", "deal_over", "greedy_action", "observe_rows", "policy_path", "policy_rollouts"]


def policy_path(spec: str) -> Path:
    """The policy file of a model spec: ``"ppo"`` the shipped network, ``"ppo:PATH"`` the file at ``PATH``;
    ``ValueError`` for any other spec."""
    name, sep, rest = spec.partition(":")
    if name != "ppo" or (sep and not rest):
        raise ValueError(f"expected 'ppo' or 'ppo:PATH' for a policy, got {spec!r}")
    return Path(rest) if rest else SHIPPED_MODEL


@lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int) -> PolicyWeights:
    # every search agent of an evaluation loads the same file: read and check it once per version of the file
    return load_policy(path)


class PolicyModel:
    """The actor of a policy file, asked for whole batches of observation rows."""

    def __init__(self, spec: str = "ppo") -> None:
        path = policy_path(spec)
        check_readable_file(path, "policy file", NO_POLICY_HINT)
        self.spec = spec
        self.weights = _load(str(path.resolve()), path.stat().st_mtime_ns)

    def logits(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``(n, NUM_ACTIONS)`` float64 logits, ``-inf`` at the illegal actions."""
        out = self.weights.logits(obs).astype(np.float64)
        out[masks == 0] = -np.inf
        return out

    def log_probs(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``(n, NUM_ACTIONS)`` log-probabilities of the masked softmax (``-inf`` at the illegal actions)."""
        z = self.logits(obs, masks)
        top = z.max(axis=1, keepdims=True)
        return z - top - np.log(np.exp(z - top).sum(axis=1, keepdims=True))

    def choose(self, obs: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """One action per row: the most probable legal one, or with ``rng`` a draw from the masked softmax."""
        z = self.logits(obs, masks)
        if rng is not None:
            z += rng.gumbel(size=z.shape)  # -inf stays -inf: illegal actions are never drawn
        return z.argmax(axis=1).astype(np.int64)


@njit(cache=True)
def observe_rows(
    states: np.ndarray, p: np.ndarray, rows: np.ndarray, obs: np.ndarray, masks: np.ndarray, scratch: np.ndarray
) -> None:
    """``obs[i]``, ``masks[i]``: the observation and legal mask of the seat to act in ``states[rows[i]]``
    (``scratch[rows[i]]`` is that row's cinch memo)."""
    for i in range(rows.shape[0]):
        b = rows[i]
        observation.observe_with(states[b], p, view.to_act(states[b]), obs[i], masks[i], scratch[b])


@njit(cache=True)
def _step_rows(states: np.ndarray, p: np.ndarray, rows: np.ndarray, actions: np.ndarray, scratch: np.ndarray) -> int:
    """Step ``states[rows[i]]`` with ``actions[i]``; returns -1, or the first row whose action was refused."""
    for i in range(rows.shape[0]):
        b = rows[i]
        if not core.step_with(states[b], p, actions[i], scratch[b]):
            return b
    return -1


@njit(cache=True)
def deal_over(s: np.ndarray, me: int) -> bool:
    """The deal is settled, or seat ``me`` is out of it (its chips for the deal cannot change any more). A pass
    in a secret declaration round is not final: a dealer whom everyone left alone plays after all."""
    phase = view.phase_of(s)
    if phase == core.DEAL_OVER or phase == core.GAME_OVER:
        return True
    return me >= 0 and view.decision_of(s, me) == core.PASSED and phase != core.DECLARE


@njit(cache=True)
def _playing(states: np.ndarray, me: int, out: np.ndarray) -> int:
    """Marks in ``out`` the rows where ``deal_over`` is false; returns how many."""
    n = 0
    for b in range(states.shape[0]):
        out[b] = not deal_over(states[b], me)
        n += out[b]
    return n


@njit(cache=True)
def greedy_action(
    weights: tuple[np.ndarray, ...],
    biases: tuple[np.ndarray, ...],
    tanh: bool,
    obs: np.ndarray,
    mask: np.ndarray,
    hidden: np.ndarray,
    nonzero: np.ndarray,
    logits: np.ndarray,
) -> int:
    """The policy's most probable legal action for one observation (the first of equals), -1 if none is legal;
    ``hidden``, ``nonzero`` and ``logits`` are work buffers (``PackedPolicy.scratch``)."""
    forward_row(weights, biases, tanh, obs, hidden, nonzero, logits)
    best = -1
    for a in range(core.NUM_ACTIONS):
        if mask[a] != 0 and (best < 0 or logits[a] > logits[best]):
            best = a
    return best


@njit(cache=True)
def _greedy_rollouts(
    states: np.ndarray,
    p: np.ndarray,
    me: int,
    weights: tuple[np.ndarray, ...],
    biases: tuple[np.ndarray, ...],
    tanh: bool,
    hidden: np.ndarray,
    nonzero: np.ndarray,
) -> int:
    """``policy_rollouts`` greedy, compiled whole: each row is played to its end, one decision after another
    (encode, forward pass, the first most probable legal action, step), with no Python between the steps.
    Returns the decisions taken, or ``-1 - b`` if row ``b`` refused the policy's action."""
    obs = np.zeros(observation.OBS_SIZE, dtype=np.float32)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    x = np.zeros(core.SCRATCH_SIZE, dtype=np.int64)  # the cinch memo of the row being played
    logits = np.empty(core.NUM_ACTIONS, dtype=np.float32)
    taken = 0
    for b in range(states.shape[0]):
        s = states[b]
        x[:] = 0
        while not deal_over(s, me):
            observation.observe_with(s, p, view.to_act(s), obs, mask, x)
            best = greedy_action(weights, biases, tanh, obs, mask, hidden, nonzero, logits)
            if best < 0 or not core.step_with(s, p, best, x):
                return -1 - b
            taken += 1
    return taken


def policy_rollouts(
    states: np.ndarray, p: np.ndarray, model: PolicyModel, me: int = -1, rng: np.random.Generator | None = None
) -> int:
    """Play every row of ``states`` (changed in place) with ``model`` for every seat until the deal is settled, or
    with ``me >= 0`` until seat ``me`` is out of it; greedy, or sampled with ``rng``. Returns the decisions taken.

    Greedy play is one compiled call (``_greedy_rollouts``); sampled play takes one compiled encoding and one
    compiled forward pass per step over all the rows still playing, and draws the actions of the step at once
    from ``rng``."""
    if rng is None:
        packed = model.weights.packed
        taken = _greedy_rollouts(states, p, me, packed.weights, packed.biases, packed.tanh, *packed.scratch())
        if taken < 0:
            raise RuntimeError(f"the policy's action was refused in row {-1 - taken} of the rollouts")
        return taken
    scratch = np.zeros((states.shape[0], core.SCRATCH_SIZE), dtype=np.int64)  # each row's cinch memo
    going = np.zeros(states.shape[0], dtype=np.bool_)
    obs = np.zeros((states.shape[0], observation.OBS_SIZE), dtype=np.float32)
    masks = np.zeros((states.shape[0], core.NUM_ACTIONS), dtype=np.int8)
    taken = 0
    while _playing(states, me, going):
        rows = np.flatnonzero(going)
        o, m = obs[: rows.size], masks[: rows.size]
        observe_rows(states, p, rows, o, m, scratch)
        actions = model.choose(o, m, rng)
        bad = _step_rows(states, p, rows, actions, scratch)
        if bad >= 0:
            raise RuntimeError(f"the policy's action was refused in row {bad} of the rollouts")
        taken += rows.size
    return taken
