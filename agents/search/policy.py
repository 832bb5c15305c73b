"""An exported policy (``agents.ppo``'s file format) inside the search: batched forward passes over many worlds.

``PolicyModel(path)`` wraps the actor network of a policy file (the shipped ``agents/models/ppo.npz`` by default)
for the search agents. Everything here works on batches: ``observe_rows`` encodes, in one compiled call, the
observation and legal mask of the seat to act in every listed row of a batch of core states; ``log_probs`` and
``choose`` run one numpy forward pass over all of those rows; ``policy_rollouts`` plays a batch of worlds to the
end of the deal with the policy in every seat, one forward pass per step over the rows still playing (the kind
``"ppo"`` of ``agents.search.rollout``).

Greedy play takes the most probable legal action (the first one on a tie), exactly as ``agents.ppo.PPOAgent``
does; ``sample=True`` draws from the masked softmax (Gumbel-max, from the caller's generator).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
from numba import njit

from agents.ppo import SHIPPED_MODEL, PolicyWeights, load_policy
from bourre_env import core, observation, view

__all__ = ["PolicyModel", "observe_rows", "policy_rollouts", "policy_path", "deal_over"]


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
        if not path.is_file():
            raise ValueError(f"{path}: no such policy file")
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


def policy_rollouts(
    states: np.ndarray, p: np.ndarray, model: PolicyModel, me: int = -1, rng: np.random.Generator | None = None
) -> int:
    """Play every row of ``states`` (changed in place) with ``model`` for every seat until the deal is settled, or
    with ``me >= 0`` until seat ``me`` is out of it; greedy, or sampled with ``rng``. Returns the decisions taken.

    One compiled encoding and one forward pass per step over all the rows still playing: the cost of a step is
    a matrix product, not a Python call per row."""
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
