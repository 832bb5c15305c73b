"""Rollout policies of the search agents: many core states played to the end of the deal at once.

A rollout plays every seat of a world (a core state, ``bourre_env.sampler``) with one policy until the
deal is settled, and the chips each seat made are read from the state. ``Rollout(kind).run(states, params)``
plays a batch of worlds in one compiled call; the kinds:

* ``"heuristic"`` (the default): the heuristic, compiled (``agents.heuristic.batch.heuristic_action``, the
  batch port of ``agents.heuristic``: the same decisions from the same observation rows). Each decision
  encodes the observation of the seat to act and asks the kernel, all inside one compiled loop.
* ``"random"``: uniformly random legal actions (the cheapest, and the weakest model of the other players).
* ``"ppo"`` (the shipped network, ``agents/models/ppo.npz``) or ``"ppo:PATH"`` (any exported policy file): the
  policy for every seat (``agents.search.policy.policy_rollouts``), one batched forward pass per step over the
  rows still playing; greedy (the action ``agents.make("ppo")`` plays), or with ``sample=True`` drawn from the
  masked softmax.

``Rollout(kind, others="heuristic")`` plays ``kind`` (a greedy ``ppo`` policy) only at the searcher's seat
(``run``'s ``me``) and the compiled heuristic at every other seat, all inside one compiled loop: the value of
"this action, then my policy, against players who play the heuristic", for a search that knows or assumes
its field.

``Rollout.actions(observations, masks)`` asks the same policy for a batch of observation rows (the searcher's
own policy when ``others`` is given), which is how the search agents consult it outside the rollouts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.batch import FLOAT_WORK, INT_WORK, BatchHeuristic, heuristic_action, params_array
from agents.search.policy import PolicyModel, deal_over, greedy_action, policy_rollouts
from bourre_env import core, observation, view
from bourre_env.batch import random_move

__all__ = ["OTHERS", "ROLLOUT_KINDS", "Rollout"]

ROLLOUT_KINDS = ("heuristic", "random", "ppo")
"""The kinds of rollout; ``"ppo"`` also as ``"ppo:PATH"`` (a policy file)."""


@njit(cache=True)
def _uniform(rng: np.ndarray) -> float:
    return (core.splitmix64(rng) >> 10) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _random_rollouts(states: np.ndarray, p: np.ndarray, me: int, rng: np.ndarray) -> int:
    """Play uniformly random legal actions in every row until ``deal_over``; returns the decisions taken."""
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    x = np.zeros(core.SCRATCH_SIZE, dtype=np.int64)  # the cinch memo of the row being played
    taken = 0
    for b in range(states.shape[0]):
        s = states[b]
        x[:] = 0
        while not deal_over(s, me):
            taken += 1
            random_move(s, p, rng, mask, x)
    return taken


@njit(cache=True)
def _heuristic_rollouts(states: np.ndarray, p: np.ndarray, me: int, hparams: np.ndarray, rng: np.ndarray) -> int:
    """Play the compiled heuristic for every seat in every row until ``deal_over``; returns the decisions taken, or
    -1 - row for the first row where the heuristic could not answer (not expected of a legal state)."""
    obs = np.zeros(observation.OBS_SIZE, dtype=np.float32)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    ints = np.zeros(INT_WORK, dtype=np.int64)
    floats = np.zeros(FLOAT_WORK, dtype=np.float64)
    x = np.zeros(core.SCRATCH_SIZE, dtype=np.int64)  # the cinch memo of the row being played
    taken = 0
    for b in range(states.shape[0]):
        s = states[b]
        x[:] = 0
        while not deal_over(s, me):
            observation.observe_with(s, p, view.to_act(s), obs, mask, x)
            a = heuristic_action(obs, mask, _uniform(rng), hparams, ints, floats)
            if a < 0 or not core.step_with(s, p, a, x):
                return -1 - b
            taken += 1
    return taken


@njit(cache=True)
def _mixed_rollouts(
    states: np.ndarray,
    p: np.ndarray,
    me: int,
    weights: tuple[np.ndarray, ...],
    biases: tuple[np.ndarray, ...],
    tanh: bool,
    hidden: np.ndarray,
    nonzero: np.ndarray,
    hparams: np.ndarray,
    rng: np.ndarray,
) -> int:
    """The policy, greedy, at seat ``me`` and the compiled heuristic at every other seat, each row until
    ``deal_over``; returns the decisions taken, or -1 - row for the first row that refused an action."""
    obs = np.zeros(observation.OBS_SIZE, dtype=np.float32)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    ints = np.zeros(INT_WORK, dtype=np.int64)
    floats = np.zeros(FLOAT_WORK, dtype=np.float64)
    logits = np.empty(core.NUM_ACTIONS, dtype=np.float32)
    x = np.zeros(core.SCRATCH_SIZE, dtype=np.int64)  # the cinch memo of the row being played
    taken = 0
    for b in range(states.shape[0]):
        s = states[b]
        x[:] = 0
        while not deal_over(s, me):
            seat = view.to_act(s)
            observation.observe_with(s, p, seat, obs, mask, x)
            if seat == me:
                a = greedy_action(weights, biases, tanh, obs, mask, hidden, nonzero, logits)
            else:
                a = heuristic_action(obs, mask, _uniform(rng), hparams, ints, floats)
            if a < 0 or not core.step_with(s, p, a, x):
                return -1 - b
            taken += 1
    return taken


OTHERS = ("heuristic",)
"""Who may play the other seats of a rollout instead of its own policy (``Rollout(others=...)``)."""


class Rollout:
    """A rollout policy for every seat, or for the searcher's seat with ``others`` at the rest (module docstring),
    seeded: the same seed plays the same rollouts."""

    def __init__(self, kind: str = "heuristic", seed: int = 0, sample: bool = False, others: str | None = None) -> None:
        base = kind.partition(":")[0]
        if base not in ROLLOUT_KINDS or (base != "ppo" and kind != base):
            raise ValueError(f"rollout: expected one of {ROLLOUT_KINDS} or 'ppo:PATH', got {kind!r}")
        if others is not None and others not in OTHERS:
            raise ValueError(f"others: expected one of {OTHERS} got {others!r}")
        if others is not None and (base != "ppo" or sample):
            raise ValueError(f"others={others}: the searcher's seat must play a greedy policy file (rollout=ppo)")
        self.kind = base
        self.spec = kind
        self.others = others
        self.sample = bool(sample)
        self.policy = PolicyModel(kind) if base == "ppo" else None
        seq = np.random.SeedSequence(seed)
        self._generator = np.random.default_rng(seq.spawn(1)[0])  # the policy's draws, with sample=True
        self._rng = (seq.generate_state(1, dtype=np.uint64) >> np.uint64(1)).astype(np.int64)
        self._model = BatchHeuristic("default", seed=int(seq.generate_state(2)[1]))
        self._hparams = params_array("default")
        self.decisions = 0  # rollout decisions taken (statistics)

    def actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The policy's action for each row of observations (float32) and masks (int8); ``"random"``: uniform among
        the legal actions."""
        if self.kind == "heuristic":
            return self._model.act(np.ascontiguousarray(obs), np.ascontiguousarray(masks))
        if self.policy is not None:
            return self.policy.choose(obs, masks, self._generator if self.sample else None)
        out = np.zeros(obs.shape[0], dtype=np.int64)
        for i in range(obs.shape[0]):
            legal = np.flatnonzero(masks[i])
            out[i] = legal[core.splitmix64(self._rng) % legal.size]
        return out

    def run(self, states: np.ndarray, params: np.ndarray, me: int = -1) -> None:
        """Play every row of ``states`` (``(B, core.STATE_SIZE)`` int64, changed in place) until the deal is settled,
        or, with ``me >= 0``, until seat ``me`` has passed (its chips for the deal are then final)."""
        if (
            not isinstance(states, np.ndarray)
            or states.ndim != 2
            or states.shape[1] != core.STATE_SIZE
            or states.dtype != np.int64
        ):
            raise ValueError(
                f"states: expected an int64 array of shape (B, {core.STATE_SIZE}), got "
                f"{getattr(states, 'dtype', type(states).__name__)} {getattr(states, 'shape', '')}"
            )
        if not states.flags.c_contiguous or not states.flags.writeable:
            raise ValueError("states: expected a writeable C-contiguous array (the rows are stepped in place)")
        if self.kind == "random":
            self.decisions += _random_rollouts(states, params, me, self._rng)
            return
        if self.policy is not None and self.others is not None:
            if me < 0:
                raise ValueError(f"others={self.others}: run needs the searcher's seat (me >= 0)")
            packed = self.policy.weights.packed
            weights = (packed.weights, packed.biases, packed.tanh)
            taken = _mixed_rollouts(states, params, me, *weights, *packed.scratch(), self._hparams, self._rng)
            if taken < 0:
                raise RuntimeError(f"an action was refused in row {-1 - taken} of the rollouts")
            self.decisions += taken
            return
        if self.policy is not None:
            self.decisions += policy_rollouts(states, params, self.policy, me, self._generator if self.sample else None)
            return
        taken = _heuristic_rollouts(states, params, me, self._hparams, self._rng)
        if taken < 0:
            raise RuntimeError(f"the heuristic could not play row {-1 - taken} of the rollouts")
        self.decisions += taken
