"""Rollout policies of the search agents: many core states played to the end of the deal at once.

A rollout plays every seat of a world (a core state, ``bourre_env.sampler``) with one policy until the
deal is settled, and reports the chips each seat made. ``Rollout(kind).run(states, params)`` does a batch
of worlds in one go; the kinds:

* ``"batch"``: the compiled batch heuristic ``agents.heuristic_batch.BatchHeuristic`` (more than a million
  decisions per second from observation rows). The worlds are stepped by compiled code; each round of
  decisions is one call to it.
* ``"heuristic"``: the Python heuristic (``agents.heuristic.HeuristicAgent``) asked row by row: the same
  policy, about 75 microseconds a decision, so only small searches fit a tight time budget.
* ``"random"``: uniformly random legal actions, entirely compiled (the cheapest, and the weakest model of
  the other players).
* ``"auto"``: ``"batch"`` where the batch heuristic can be imported, else ``"heuristic"``.

``batch_heuristic()`` is the one place that looks for the batch heuristic: once
``agents/heuristic_batch.py`` exists, ``"auto"`` rollouts use it, and nothing else changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from agents.heuristic import HeuristicAgent
from bourre_env import core, observation

__all__ = ["ROLLOUT_KINDS", "Rollout", "batch_heuristic", "resolve_kind"]

ROLLOUT_KINDS = ("auto", "batch", "heuristic", "random")


def batch_heuristic(seed: int) -> Any | None:
    """The batch heuristic (``BatchHeuristic(params="default", seed=seed)``), or None where it is not installed.

    Its contract: ``act(observations: float32 (B, OBS_SIZE), masks: int8 (B, NUM_ACTIONS), out=None) -> int64
    (B,)``, a legal action for each row, reading nothing but the rows.
    """
    try:
        from agents.heuristic_batch import BatchHeuristic  # type: ignore[import-not-found]
    except ImportError:
        return None
    return BatchHeuristic(params="default", seed=seed)


def resolve_kind(kind: str) -> str:
    """The rollout kind that ``kind`` stands for here (``"auto"`` resolved); ``ValueError`` for an unknown one."""
    if kind not in ROLLOUT_KINDS:
        raise ValueError(f"rollout: expected one of {ROLLOUT_KINDS}, got {kind!r}")
    if kind == "auto":
        return "batch" if batch_heuristic(0) is not None else "heuristic"
    if kind == "batch" and batch_heuristic(0) is None:
        raise ValueError("rollout 'batch': agents.heuristic_batch is not installed; use 'heuristic' or 'random'")
    return kind


@njit(cache=True)
def _over(s: np.ndarray, me: int) -> bool:
    """The deal is settled, or seat ``me`` is out of it (its chips cannot change any more this deal)."""
    phase = s[core.S_PHASE]
    if phase == core.DEAL_OVER or phase == core.GAME_OVER:
        return True
    return me >= 0 and s[core.S_DECISION + me] == core.PASSED and s[core.S_PHASE] != core.DECLARE


@njit(cache=True)
def _random_rollouts(states: np.ndarray, p: np.ndarray, me: int, rng: np.ndarray) -> None:
    """Play uniformly random legal actions in every row until ``_over``."""
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    for b in range(states.shape[0]):
        s = states[b]
        while not _over(s, me):
            if s[core.S_PHASE] == core.PLAY:
                legal = core.play_legal(s, p, s[core.S_CUR], True)
                pick = legal
                for _ in range(core._splitmix64(rng) % core.popcount(legal)):
                    pick &= pick - 1
                core.play_card(s, p, core.lowest_card(pick), legal)
                continue
            core.legal_actions(s, p, mask)
            count = 0
            for a in range(core.NUM_ACTIONS):
                count += mask[a]
            k = core._splitmix64(rng) % count
            for a in range(core.NUM_ACTIONS):
                if mask[a]:
                    if k == 0:
                        core.step(s, p, a)
                        break
                    k -= 1


@njit(cache=True)
def _observe_rows(states: np.ndarray, p: np.ndarray, me: int, rows: np.ndarray, obs: np.ndarray,
                  masks: np.ndarray) -> int:
    """Observation and mask of the seat to act in every row not ``_over``; their row ids go to ``rows``."""
    k = 0
    for b in range(states.shape[0]):
        s = states[b]
        if _over(s, me):
            continue
        observation.observe(s, p, s[core.S_CUR], obs[k], masks[k])
        rows[k] = b
        k += 1
    return k


@njit(cache=True)
def _step_rows(states: np.ndarray, p: np.ndarray, rows: np.ndarray, actions: np.ndarray, k: int) -> int:
    """Apply ``actions[i]`` in row ``rows[i]`` (i < k); returns the first i whose action was illegal, else -1."""
    for i in range(k):
        if not core.step(states[rows[i]], p, actions[i]):
            return i
    return -1


class Rollout:
    """A rollout policy for every seat (module docstring), seeded: the same seed plays the same rollouts."""

    def __init__(self, kind: str = "auto", seed: int = 0) -> None:
        self.kind = resolve_kind(kind)
        seq = np.random.SeedSequence(seed)
        self._rng = (seq.generate_state(1, dtype=np.uint64) >> np.uint64(1)).astype(np.int64)
        self._policy: Any = None
        if self.kind == "batch":
            self._policy = batch_heuristic(int(seq.generate_state(2)[1]))
        elif self.kind == "heuristic":
            self._policy = HeuristicAgent(seed=int(seq.generate_state(2)[1]))
        self.decisions = 0  # rollout decisions taken (statistics)

    def actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The policy's action for each row of observations and masks (``"random"``: uniform among the legal)."""
        k = obs.shape[0]
        if self.kind == "batch":
            return np.asarray(self._policy.act(obs, masks), dtype=np.int64)
        if self.kind == "heuristic":
            return np.array([self._policy.act({"observation": obs[i], "action_mask": masks[i]}) for i in range(k)],
                            dtype=np.int64)
        out = np.zeros(k, dtype=np.int64)
        for i in range(k):
            legal = np.flatnonzero(masks[i])
            out[i] = legal[core._splitmix64(self._rng) % legal.size]
        return out

    def run(self, states: np.ndarray, params: np.ndarray, me: int = -1) -> None:
        """Play every row of ``states`` (``(B, core.STATE_SIZE)`` int64, changed in place) until the deal is settled,
        or, with ``me >= 0``, until seat ``me`` has passed (its chips for the deal are then final)."""
        if states.ndim != 2 or states.shape[1] != core.STATE_SIZE or states.dtype != np.int64:
            raise ValueError(f"states: expected an int64 array of shape (B, {core.STATE_SIZE}), got "
                             f"{states.dtype} {states.shape}")
        if not states.flags.c_contiguous:
            raise ValueError("states: expected a C-contiguous array (the rows are stepped in place)")
        if self.kind == "random":
            _random_rollouts(states, params, me, self._rng)
            return
        b = states.shape[0]
        obs = np.zeros((b, observation.OBS_SIZE), dtype=np.float32)
        masks = np.zeros((b, core.NUM_ACTIONS), dtype=np.int8)
        rows = np.zeros(b, dtype=np.int64)
        while True:
            k = _observe_rows(states, params, me, rows, obs, masks)
            if k == 0:
                return
            actions = self.actions(obs[:k], masks[:k])
            bad = _step_rows(states, params, rows, actions, k)
            if bad >= 0:
                raise RuntimeError(f"rollout policy {self.kind!r} chose the illegal action {int(actions[bad])}")
            self.decisions += k
