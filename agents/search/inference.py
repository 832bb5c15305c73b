"""Worlds weighed by a model of the other players: what they did before says something about what they hold.

``bourre_env.sampler`` draws the worlds a seat cannot rule out uniformly: an opponent who came in and kept
two cards is as likely to hold junk as trumps, and its discards are any cards of its hand. Against players
who choose (the heuristic keeps trumps and aces and comes in on good hands), uniform worlds are too kind to
the searcher. ``model_worlds`` corrects this with the heuristic (compiled, ``agents.heuristic.batch``), the
rollout policy of the search agents, as the model of every other seat:

1. draw ``oversample * count`` uniform worlds, each cut just before the first decision of another player
   (``WorldSampler.sample(until=...)``);
2. replay the deal from there, asking the model at every decision of another player: where it would have
   made the same public choice (pass or play, the number of cards discarded, a declaration, a second pass),
   its own choice is played (its discards, not the uniform ones); where it would not, the recorded choice is
   played and the world's weight is multiplied by ``mismatch``; a secret declaration is the model's;
3. keep the worlds that still give the observer its observation (a card an opponent played must be in the
   hand the model kept, an opponent's cinch must allow its plays), and draw ``count`` of them in proportion to
   their weights (systematic resampling).

With ``mismatch = 0`` this is the posterior of the deal given the observation, for players who play like the
model; a small positive ``mismatch`` keeps worlds available when the model rarely agrees.

``policy_worlds`` is the same with an exported policy (``agents.search.policy.PolicyModel``, the shipped network
by default) as the model, and no mismatch factor: a world's weight is the product, over every decision another
player took since the observer's deal began (pass or play, the exact discards, a declaration, every card
played), of the policy's probability of that action in that world. The uniform proposals keep their own
discards, so the weights are exact importance weights and the resampled worlds follow the posterior of the deal
for players who play the policy (up to the resampling's finite size); a declaration still secret is drawn from
the policy itself, which needs no weight.

The exact posterior is narrow: a network that plays its most probable card with probability 0.9 or more makes
most uniform proposals near-impossible after a few tricks, and 512 proposals are then worth one to three
independent worlds at half of a 5-player deal's decisions (``temper`` 1). ``temper < 1`` raises every weight to
that power, a posterior between the uniform one and the exact one, with many more distinct worlds (at
``temper`` 0.1, 12 to 430 of 512). Each event of the deal is replayed in all the proposals at once: one
compiled call encodes the observation of every row where another player decides, runs the policy's forward pass
(``agents.ppo.forward_row``) and adds the log-probability of the recorded action.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.batch import FLOAT_WORK, INT_WORK, heuristic_action, params_array
from agents.ppo import forward_row
from agents.search.policy import PolicyModel, observe_rows
from bourre_env import core, observation, view
from bourre_env.sampler import EV_ACTION, EV_DRAW, EV_HIDDEN, WorldSampler

__all__ = ["model_worlds", "policy_worlds", "public_outcome", "MISMATCH", "MODELS"]

MODELS = ("heuristic", "ppo")
"""Models of the other players (option ``model`` of the search agents); ``"ppo"`` also as ``"ppo:PATH"``."""

MISMATCH = 0.02
"""Weight factor of a world for each earlier decision of another player that the model takes differently there."""
_HEURISTIC = params_array("default")


@njit(cache=True)
def public_outcome(s: np.ndarray, p: np.ndarray, action: int) -> int:
    """What the others see of a decision: the action, a draw reduced to the number of the hand's cards discarded
    and whether a dealer who may take the turned card left it."""
    phase = view.phase_of(s)
    if (phase != core.DRAW_OR_PASS and phase != core.DRAW) or action < core.STAY_BASE:
        return action
    positions = action - core.STAY_BASE
    surplus = core.surplus_position(s, p, view.to_act(s))
    return core.STAY_BASE + 2 * core.popcount(positions & ~surplus) + (1 if positions & surplus else 0)


@njit(cache=True)
def _replay_with_model(
    states: np.ndarray,
    p: np.ndarray,
    first: int,
    kinds: np.ndarray,
    seats: np.ndarray,
    args: np.ndarray,
    discards: np.ndarray,
    hparams: np.ndarray,
    rng: np.ndarray,
    pot: int,
    target: np.ndarray,
    misses: np.ndarray,
    alive: np.ndarray,
) -> None:
    """Replay events ``first..`` in every world, the compiled heuristic deciding for the other players where
    the others would see the same (module docstring), then keep the worlds that give seat 0 ``target``."""
    obs = np.zeros(observation.OBS_SIZE, dtype=np.float32)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    ints = np.zeros(INT_WORK, dtype=np.int64)
    floats = np.zeros(FLOAT_WORK, dtype=np.float64)
    x = np.zeros(core.SCRATCH_SIZE, dtype=np.int64)  # the cinch memo of the world being replayed
    for b in range(states.shape[0]):
        s = states[b]
        x[:] = 0
        for e in range(first, kinds.shape[0]):
            q = seats[e]
            if kinds[e] == EV_DRAW:
                recorded = core.STAY_BASE + core.cards_to_positions(view.hand_of(s, q), discards[b, q])
            else:
                recorded = args[e]
            a = recorded
            if q != 0 and (kinds[e] != EV_ACTION or recorded >= core.PASS):
                observation.observe_with(s, p, q, obs, mask, x)
                u = (core.splitmix64(rng) >> 10) * (1.0 / 9007199254740992.0)
                model = heuristic_action(obs, mask, u, hparams, ints, floats)
                if model >= 0 and (kinds[e] == EV_HIDDEN or public_outcome(s, p, model) == public_outcome(s, p, a)):
                    a = model
                else:
                    misses[b] += 1
            if not core.step_with(s, p, a, x):
                alive[b] = False
                break
        if not alive[b]:
            continue
        core.set_pot(s, pot)
        # a typed seat, not the literal 0: a literal argument compiles the encoder (and the cinch search under it)
        # once more, for that constant, about a minute on 2 cores
        observation.encode_with(s, p, np.int64(0), obs, x)
        for i in range(target.shape[0]):
            if obs[i] != target[i]:
                alive[b] = False
                break


def model_worlds(
    sampler: WorldSampler,
    target: np.ndarray,
    count: int,
    rng: np.random.Generator,
    oversample: int = 8,
    mismatch: float = MISMATCH,
) -> np.ndarray:
    """``count`` worlds (``(count, core.STATE_SIZE)``) drawn from up to ``oversample * count`` uniform ones, weighed
    by how well the heuristic explains the other players' earlier decisions (module docstring). Proposals come in
    rounds of ``2 * count`` until the weights are worth ``count`` independent worlds (effective sample size).
    ``target`` is the observer's observation vector. Falls back to uniform worlds when none survives."""
    events = sampler.events
    decisions = [
        e for e, (kind, seat, action) in enumerate(events) if seat != 0 and (kind != EV_ACTION or action >= core.PASS)
    ]
    if not decisions or oversample <= 1:
        return sampler.sample(count, seed=rng)
    first = decisions[0]
    kinds = np.array([e[0] for e in events], dtype=np.int64)
    seats = np.array([e[1] for e in events], dtype=np.int64)
    args = np.array([e[2] for e in events], dtype=np.int64)
    target = np.asarray(target, dtype=np.float32)
    kept_states, kept_weights = [], []
    drawn_so_far = 0
    ess = 0.0
    # rounds of 2 * count proposals, until the weights are worth ``count`` independent worlds or the budget is spent
    while drawn_so_far < oversample * count and ess < count:
        size = min(2 * count, oversample * count - drawn_so_far)
        drawn = sampler.sample(size, seed=rng, until=first)
        states = np.ascontiguousarray(drawn.states)
        alive = np.ones(size, dtype=np.bool_)
        misses = np.zeros(size, dtype=np.int64)
        seed = np.array([rng.integers(0, 2**62)], dtype=np.int64)
        _replay_with_model(
            states,
            sampler.params,
            first,
            kinds,
            seats,
            args,
            drawn.discards,
            _HEURISTIC,
            seed,
            sampler.record.pot,
            target,
            misses,
            alive,
        )
        kept_states.append(states[alive])
        kept_weights.append(mismatch ** misses[alive].astype(np.float64))
        drawn_so_far += size
        w = np.concatenate(kept_weights)
        ess = float(w.sum() ** 2 / (w**2).sum()) if w.size and w.sum() > 0 else 0.0
    states = np.concatenate(kept_states)
    weights = np.concatenate(kept_weights)
    if weights.size == 0 or weights.sum() <= 0.0:
        return sampler.sample(count, seed=rng)
    cum = np.cumsum(weights / weights.sum())
    picks = np.searchsorted(cum, (rng.random() + np.arange(count)) / count)
    return states[np.minimum(picks, weights.size - 1)]


@njit(cache=True)
def _recorded_actions(states: np.ndarray, rows: np.ndarray, seat: int, discards: np.ndarray, out: np.ndarray) -> None:
    """The draw of ``seat`` in each listed world: discarding that world's discards of the seat."""
    for i in range(rows.shape[0]):
        b = rows[i]
        out[i] = core.STAY_BASE + core.cards_to_positions(view.hand_of(states[b], seat), discards[b, seat])


@njit(cache=True)
def _step_listed(
    states: np.ndarray, p: np.ndarray, rows: np.ndarray, actions: np.ndarray, scratch: np.ndarray, alive: np.ndarray
) -> None:
    """Step each listed world; a world that refuses its action is no longer ``alive``."""
    for i in range(rows.shape[0]):
        b = rows[i]
        if not core.step_with(states[b], p, actions[i], scratch[b]):
            alive[b] = False


@njit(cache=True)
def _keep_matching(
    states: np.ndarray, p: np.ndarray, pot: int, target: np.ndarray, scratch: np.ndarray, alive: np.ndarray
) -> None:
    """Worlds that do not give the observer (seat 0) the observation ``target`` are no longer ``alive``."""
    obs = np.zeros(observation.OBS_SIZE, dtype=np.float32)
    for b in range(states.shape[0]):
        if not alive[b]:
            continue
        core.set_pot(states[b], pot)
        observation.encode_with(states[b], p, np.int64(0), obs, scratch[b])  # typed: as in _replay_with_model
        for i in range(target.shape[0]):
            if obs[i] != target[i]:
                alive[b] = False
                break


@njit(cache=True)
def _add_log_probs(
    states: np.ndarray,
    p: np.ndarray,
    rows: np.ndarray,
    actions: np.ndarray,
    scratch: np.ndarray,
    weights: tuple[np.ndarray, ...],
    biases: tuple[np.ndarray, ...],
    tanh: bool,
    hidden: np.ndarray,
    nonzero: np.ndarray,
    log_w: np.ndarray,
) -> None:
    """Add to ``log_w[rows[i]]`` the log-probability of ``actions[i]`` under the policy's masked softmax for the
    seat to act in ``states[rows[i]]`` (``-inf`` for an action it may not take): encoding, forward pass and
    softmax compiled together, one row at a time."""
    obs = np.zeros(observation.OBS_SIZE, dtype=np.float32)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    logits = np.zeros(core.NUM_ACTIONS, dtype=np.float32)
    for i in range(rows.shape[0]):
        b = rows[i]
        observation.observe_with(states[b], p, view.to_act(states[b]), obs, mask, scratch[b])
        if mask[actions[i]] == 0:
            log_w[b] = -np.inf
            continue
        forward_row(weights, biases, tanh, obs, hidden, nonzero, logits)
        top = -np.inf
        for a in range(core.NUM_ACTIONS):
            if mask[a] != 0 and logits[a] > top:
                top = float(logits[a])
        total = 0.0
        for a in range(core.NUM_ACTIONS):
            if mask[a] != 0:
                total += np.exp(float(logits[a]) - top)
        log_w[b] += float(logits[actions[i]]) - top - np.log(total)


def _policy_log_weights(
    states: np.ndarray,
    p: np.ndarray,
    first: int,
    events: list[tuple[int, int, int]],
    discards: np.ndarray,
    policy: PolicyModel,
    rng: np.random.Generator,
    pot: int,
    target: np.ndarray,
) -> np.ndarray:
    """Replay events ``first..`` in every world (changed in place); the log of each world's weight under the
    policy (module docstring), ``-inf`` for the worlds that do not give seat 0 ``target``."""
    size = states.shape[0]
    scratch = np.zeros((size, core.SCRATCH_SIZE), dtype=np.int64)
    alive = np.ones(size, dtype=np.bool_)
    log_w = np.zeros(size)
    obs = np.zeros((size, observation.OBS_SIZE), dtype=np.float32)
    masks = np.zeros((size, core.NUM_ACTIONS), dtype=np.int8)
    acts = np.zeros(size, dtype=np.int64)
    packed = policy.weights.packed
    hidden, nonzero = packed.scratch()
    for s in states:
        core.set_pot(s, pot)  # the pot the others saw: the deal's pot, which stays the same until settlement
    # every world has the same events, so event by event all worlds step together: one forward pass per event
    for kind, seat, arg in events[first:]:
        rows = np.flatnonzero(alive)
        if rows.size == 0:
            break
        a = acts[: rows.size]
        if kind == EV_DRAW:
            _recorded_actions(states, rows, seat, discards, a)
        else:
            a[:] = arg
        if seat != 0 and kind == EV_HIDDEN:
            o, m = obs[: rows.size], masks[: rows.size]
            observe_rows(states, p, rows, o, m, scratch)
            a[:] = policy.choose(o, m, rng)  # drawn from the model: its probability and the proposal's cancel
        elif seat != 0:
            weights, biases = packed.weights, packed.biases
            _add_log_probs(states, p, rows, a, scratch, weights, biases, packed.tanh, hidden, nonzero, log_w)
        _step_listed(states, p, rows, a, scratch, alive)
    _keep_matching(states, p, pot, target, scratch, alive)
    log_w[~alive] = -np.inf
    return log_w


def policy_worlds(
    sampler: WorldSampler,
    target: np.ndarray,
    count: int,
    rng: np.random.Generator,
    policy: PolicyModel,
    oversample: int = 8,
    temper: float = 1.0,
) -> np.ndarray:
    """``count`` worlds (``(count, core.STATE_SIZE)``) drawn from up to ``oversample * count`` uniform ones, weighed
    by the policy's probability of every decision the other players took (module docstring), raised to the power
    ``temper``; proposals in rounds of ``2 * count`` until the weights are worth ``count`` independent worlds. Falls
    back to uniform worlds when none survives."""
    events = sampler.events
    decisions = [e for e, (_, seat, _) in enumerate(events) if seat != 0]
    if not decisions or oversample <= 1:
        return sampler.sample(count, seed=rng)
    first = decisions[0]
    target = np.asarray(target, dtype=np.float32)
    kept_states, kept_logs = [], []
    drawn_so_far = 0
    ess = 0.0
    while drawn_so_far < oversample * count and ess < count:
        size = min(2 * count, oversample * count - drawn_so_far)
        drawn = sampler.sample(size, seed=rng, until=first)
        states = np.ascontiguousarray(drawn.states)
        log_w = _policy_log_weights(
            states, sampler.params, first, events, drawn.discards, policy, rng, sampler.record.pot, target
        )
        keep = np.isfinite(log_w)
        kept_states.append(states[keep])
        kept_logs.append(temper * log_w[keep])
        drawn_so_far += size
        logs = np.concatenate(kept_logs)
        if logs.size:
            w = np.exp(logs - logs.max())  # relative weights: the product of many probabilities underflows
            ess = float(w.sum() ** 2 / (w**2).sum())
    logs = np.concatenate(kept_logs)
    if logs.size == 0:
        return sampler.sample(count, seed=rng)
    states = np.concatenate(kept_states)
    weights = np.exp(logs - logs.max())
    cum = np.cumsum(weights / weights.sum())
    picks = np.searchsorted(cum, (rng.random() + np.arange(count)) / count)
    return states[np.minimum(picks, weights.size - 1)]
