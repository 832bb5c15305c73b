"""Worlds weighed by a model of the other players: what they did before says something about what they hold.

``bourre_env.sampler`` draws the worlds a seat cannot rule out uniformly: an opponent who came in and kept
two cards is as likely to hold junk as trumps, and its discards are any cards of its hand. Against players
who choose (the heuristic keeps trumps and aces and comes in on good hands), uniform worlds are too kind to
the searcher. ``model_worlds`` corrects this with the rollout policy as the model of every other seat:

1. draw ``oversample * count`` uniform worlds, each taken just before the first decision of another player;
2. replay the deal from there, asking the model at every decision of another player: where it would have
   made the same public choice (pass or play, the number of cards discarded, a declaration, a second pass),
   its own choice is played (its discards, not the uniform ones); where it would not, the recorded choice is
   played and the world's weight is multiplied by ``mismatch``; a secret declaration is the model's;
3. keep the worlds that still give the observer its observation (a card an opponent played must be in the
   hand the model kept), and draw ``count`` of them in proportion to their weights.

With ``mismatch = 0`` this is the posterior of the deal given the observation, for players who play like the
model; a small positive ``mismatch`` keeps worlds available when the model rarely agrees.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.rollout import Rollout
from bourre_env import core, observation
from bourre_env.sampler import EV_ACTION, EV_HIDDEN, WorldSampler

__all__ = ["model_worlds", "public_outcome", "MISMATCH"]

MISMATCH = 0.02
"""Weight factor of a world for each earlier decision of another player that the model takes differently there."""


@njit(cache=True)
def public_outcome(s: np.ndarray, p: np.ndarray, action: int) -> int:
    """What the others see of a decision: the action, a draw reduced to the number of the hand's cards discarded
    and whether a dealer who may take the turned card left it."""
    if s[core.S_PHASE] != core.DECIDE or action < core.STAY_BASE:
        return action
    positions = action - core.STAY_BASE
    surplus = core._surplus_position(s, p, s[core.S_CUR])
    return core.STAY_BASE + 2 * core.popcount(positions & ~surplus) + (1 if positions & surplus else 0)


@njit(cache=True)
def _observe_alive(states: np.ndarray, p: np.ndarray, alive: np.ndarray, rows: np.ndarray, obs: np.ndarray,
                   masks: np.ndarray) -> int:
    k = 0
    for b in range(states.shape[0]):
        if alive[b]:
            observation.observe(states[b], p, states[b, core.S_CUR], obs[k], masks[k])
            rows[k] = b
            k += 1
    return k


@njit(cache=True)
def _model_step(states: np.ndarray, p: np.ndarray, rows: np.ndarray, k: int, recorded: np.ndarray,
                model: np.ndarray, secret: bool, misses: np.ndarray, alive: np.ndarray) -> None:
    """Play the model's choice where the others would see the same (or the choice is secret), else the recorded
    one, counting the disagreement."""
    for i in range(k):
        b = rows[i]
        s = states[b]
        a = recorded[b]
        if secret or public_outcome(s, p, model[i]) == public_outcome(s, p, a):
            a = model[i]
        else:
            misses[b] += 1
        if not core.step(s, p, a):
            alive[b] = False


@njit(cache=True)
def _recorded_step(states: np.ndarray, p: np.ndarray, actions: np.ndarray, alive: np.ndarray) -> None:
    for b in range(states.shape[0]):
        if alive[b] and not core.step(states[b], p, actions[b]):
            alive[b] = False


@njit(cache=True)
def _still_consistent(states: np.ndarray, p: np.ndarray, pot: int, target: np.ndarray, alive: np.ndarray) -> None:
    """Set the pot, and drop the worlds that no longer give the observer (seat 0) its observation."""
    out = np.zeros(target.shape[0], dtype=np.float32)
    for b in range(states.shape[0]):
        if not alive[b]:
            continue
        states[b, core.S_POT] = pot
        observation.encode(states[b].copy(), p, 0, out)
        for i in range(target.shape[0]):
            if out[i] != target[i]:
                alive[b] = False
                break


def model_worlds(sampler: WorldSampler, target: np.ndarray, count: int, model: Rollout, rng: np.random.Generator,
                 oversample: int = 8, mismatch: float = MISMATCH) -> np.ndarray:
    """``count`` worlds (``(count, core.STATE_SIZE)``) drawn from ``oversample * count`` uniform ones, weighed by
    how well ``model`` explains the other players' earlier decisions (module docstring). ``target`` is the
    observer's observation vector. Falls back to the uniform worlds when none survives."""
    events = sampler.events
    decisions = [e for e, (kind, seat, action) in enumerate(events)
                 if seat != 0 and (kind != EV_ACTION or action >= core.PASS)]
    if not decisions or oversample <= 1:
        return sampler.sample(count, seed=rng)
    first = decisions[0]
    total = oversample * count
    drawn = sampler.sample(total, seed=rng, snapshots=[first])
    states = np.ascontiguousarray(drawn.snapshots[:, 0, :])
    p = sampler.params
    alive = np.ones(total, dtype=np.bool_)
    misses = np.zeros(total, dtype=np.int64)
    obs = np.zeros((total, observation.OBS_SIZE), dtype=np.float32)
    masks = np.zeros((total, core.NUM_ACTIONS), dtype=np.int8)
    rows = np.zeros(total, dtype=np.int64)
    chosen = set(decisions)
    for e in range(first, len(events)):
        recorded = np.ascontiguousarray(drawn.actions[:, e])
        if e in chosen:
            k = _observe_alive(states, p, alive, rows, obs, masks)
            if k == 0:
                break
            answers = model.actions(obs[:k], masks[:k])
            _model_step(states, p, rows, k, recorded, answers, events[e][0] == EV_HIDDEN, misses, alive)
        else:
            _recorded_step(states, p, recorded, alive)
    _still_consistent(states, p, sampler.record.pot, np.asarray(target, dtype=np.float32), alive)
    weights = np.where(alive, mismatch ** misses.astype(np.float64), 0.0)
    if weights.sum() <= 0.0:
        return drawn.states[:count]
    cum = np.cumsum(weights / weights.sum())
    picks = np.searchsorted(cum, (rng.random() + np.arange(count)) / count)
    return states[np.minimum(picks, total - 1)]
