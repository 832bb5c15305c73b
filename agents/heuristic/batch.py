"""The heuristic for a whole batch at once: ``agents.heuristic`` compiled, decision for decision the same.

``BatchHeuristic`` takes the rows that ``BatchGame.observations()`` and ``BatchGame.legal_masks()``
produce (float32 ``(B, OBS_SIZE)`` and int8 ``(B, NUM_ACTIONS)``) and returns one action per row,
computed by one compiled kernel. Like the Python agent it reads nothing but the observation and
the mask.

>>> game = BatchGame(batch_size=1024, seed=0, num_players=5)
>>> bot = BatchHeuristic("tight", seed=0)
>>> actions = bot.act(game.observations(), game.legal_masks())   # int64 (1024,)
>>> rewards, done = game.step(actions)

Relation to ``agents.heuristic``
--------------------------------
``HeuristicAgent`` is the reference: readable, documented, and what ``agents.make("heuristic")``
builds; a change of strategy is made there first, then here. This module ports it to numba:
the same decoding of the observation, the same candidate draws and outlook model, the same card
scores, with the floating-point operations in the same order (and the C library's ``pow`` where
Python computes ``x ** k``), so that every comparison the strategy makes comes out the same.
Where the port is arranged for speed the numbers are still the same ones: the field model's
results and their powers are tabled once per parameter set by the Python agent's own function
and expressions (``params_array``); a card's chance to win now and its worth if kept are found in
one pass over the opponents, each product over the same seats in the same order; powers and
void chances are remembered within a decision. (This is also why the Python agent adds its sums
left to right rather than with ``sum()``, which compensates rounding from Python 3.12 on.)

The only randomness is the tie-break between cards scored exactly alike. Both implementations
take one number ``u`` in [0, 1) per decision and play the ``int(u * k)``-th of ``k`` tied
cards (in card order): ``HeuristicAgent.act`` draws ``u`` from its generator at every decision,
``HeuristicAgent.choose(obs, mask, u)`` takes it given; ``BatchHeuristic.act`` draws one per row
from its own generator (``rng.random(B)``), or takes the caller's ``tie_breaks``. A
``BatchHeuristic`` and a ``HeuristicAgent`` built with the same seed therefore make the same
decisions when the batch is fed one row at a time.

``tests/test_heuristic_batch.py`` holds the two to identical actions on over 10^5 observations
of real play (random and heuristic players mixed, every rule preset, 2 to 8 players, each
observation under the three parameter sets, every decision round, reshuffles and exact ties),
each row with the same ``u``. ``benchmarks/heuristic_speed.py`` measures both.

For compiled callers
--------------------
``heuristic_actions(obs, masks, tie_breaks, params, out)`` is the batch kernel and
``heuristic_action(obs_row, mask_row, tie_break, params, ints, floats)`` one row of it, callable
from other numba code; ``params`` is ``params_array(...)`` (the knobs of ``HeuristicParams`` and
the tables above, as float64) and ``ints``/``floats`` are scratch buffers of ``INT_WORK``/
``FLOAT_WORK`` entries. ``heuristic_actions_at(states, p, rows, scratch, tie_breaks, params, out)`` decides
for the current seat of some rows of a ``BatchGame`` (its ``states``, ``params`` and ``scratch``): each
row's observation and mask are built by ``observation.observe_with`` into one buffer that stays in
cache and read at once, so no ``(B, OBS_SIZE)`` array is written and read back; the actions are the
ones ``heuristic_actions`` gives on those observations. None of these checks its inputs:
``BatchHeuristic.act`` and ``BatchHeuristic.act_at`` do. A row whose mask
allows nothing gets -1 and a row that is not a decision observation the heuristic can read (a
hand of more than six cards, no trump in trick play...) gets -2; ``heuristic_actions`` returns
the first such row, or -1.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from agents.base import check_batch_array
from agents.heuristic.batch_base import (
    FLOAT_WORK,
    INT_WORK,
    MALFORMED,
    NO_LEGAL,
    _first_legal,
    _name_trump,
    _resolve,
    params_array,
)
from agents.heuristic.batch_decide import _decide
from agents.heuristic.batch_play import _play
from agents.heuristic.odds import PARAM_SETS, HeuristicParams
from bourre_env import observation, view
from bourre_env.actions import NUM_ACTIONS
from bourre_env.batch import check_threads, chunk_bounds, on_threads, row_chunks
from bourre_env.observation import (
    O_PHASE,
    O_ROUND,
    OBS_SIZE,
    ROUND_NAME_TRUMP,
)

__all__ = [
    "BatchHeuristic",
    "heuristic_action",
    "heuristic_actions",
    "heuristic_actions_at",
    "heuristic_actions_at_threads",
    "params_array",
    "INT_WORK",
    "FLOAT_WORK",
]


# ---------------------------------------------------------------- entry points
@njit(cache=True)
def heuristic_action(
    obs: np.ndarray, mask: np.ndarray, tie_break: float, params: np.ndarray, ints: np.ndarray, floats: np.ndarray
) -> int:
    """The heuristic's action for one observation row and its mask (see the module docstring)."""
    if obs[O_ROUND + ROUND_NAME_TRUMP] > 0.5:
        action = _name_trump(obs, mask)
    elif obs[O_PHASE] > 0.5:
        action = _decide(obs, mask, params, ints, floats)
    else:
        action = _play(obs, mask, tie_break, params, ints, floats)
    if action >= 0 and mask[action]:
        return action
    # the defensive fallback of the Python agent, and the rows it would refuse
    first = _first_legal(mask)
    if first < 0:
        return NO_LEGAL
    return MALFORMED if action == MALFORMED else first


@njit(cache=True)
def heuristic_actions(
    obs: np.ndarray, masks: np.ndarray, tie_breaks: np.ndarray, params: np.ndarray, out: np.ndarray
) -> int:
    """Every row's action into ``out``; returns the first row that got a negative code, else -1."""
    ints = np.zeros(INT_WORK, dtype=np.int64)
    floats = np.zeros(FLOAT_WORK, dtype=np.float64)
    bad = -1
    for b in range(obs.shape[0]):
        a = heuristic_action(obs[b], masks[b], tie_breaks[b], params, ints, floats)
        out[b] = a
        if a < 0 and bad < 0:
            bad = b
    return bad


@njit(cache=True)
def heuristic_actions_at(
    states: np.ndarray,
    p: np.ndarray,
    rows: np.ndarray,
    scratch: np.ndarray,
    tie_breaks: np.ndarray,
    params: np.ndarray,
    out: np.ndarray,
) -> int:
    """The action of the current seat of each ``states[rows[i]]`` into ``out[i]``, from the seat's observation;
    returns the first ``i`` that got a negative code, else -1."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    ints = np.zeros(INT_WORK, dtype=np.int64)
    floats = np.zeros(FLOAT_WORK, dtype=np.float64)
    bad = -1
    for i in range(rows.shape[0]):
        b = rows[i]
        seat = view.to_act(states[b])
        if seat < 0:  # no one is to act: the deal is over
            out[i] = NO_LEGAL
        else:
            observation.observe_with(states[b], p, seat, obs, mask, scratch[b])
            out[i] = heuristic_action(obs, mask, tie_breaks[i], params, ints, floats)
        if out[i] < 0 and bad < 0:
            bad = i
    return bad


@njit(cache=True, parallel=True)
def heuristic_actions_at_threads(
    states: np.ndarray,
    p: np.ndarray,
    rows: np.ndarray,
    scratch: np.ndarray,
    tie_breaks: np.ndarray,
    params: np.ndarray,
    out: np.ndarray,
    chunks: int,
) -> int:
    """``heuristic_actions_at`` on ``chunks`` threads, one contiguous share of ``rows`` each (each with its own work
    buffers): the rows are distinct tables and each decision takes its own tie-break number, so the actions are
    those of one thread."""
    n = rows.shape[0]
    found = np.full(chunks, -1, dtype=np.int64)
    for c in prange(chunks):
        lo, hi = chunk_bounds(c, chunks, n)
        r = heuristic_actions_at(states, p, rows[lo:hi], scratch, tie_breaks[lo:hi], params, out[lo:hi])
        if r >= 0:
            found[c] = lo + r
    for c in range(chunks):
        if found[c] >= 0:
            return int(found[c])
    return -1


# ---------------------------------------------------------------- the agent
class BatchHeuristic:
    """``HeuristicAgent``'s decisions for a batch of observation rows, from one compiled call."""

    def __init__(self, params: HeuristicParams | str = "default", seed: int | None = 0) -> None:
        self.params = _resolve(params)
        key = next((k for k, v in PARAM_SETS.items() if v == self.params), None)
        self.name = "heuristic" if key == "default" else f"heuristic:{key or 'custom'}"
        self.rng = np.random.default_rng(seed)
        self._params = params_array(self.params)
        self._tie_breaks = np.zeros(0, dtype=np.float64)

    def act(
        self,
        observations: np.ndarray,
        masks: np.ndarray,
        out: np.ndarray | None = None,
        tie_breaks: np.ndarray | None = None,
    ) -> np.ndarray:
        """One action per row, int64 ``(B,)`` (into ``out`` when given).

        ``observations``: float32 ``(B, OBS_SIZE)``; ``masks``: int8 ``(B, NUM_ACTIONS)``, each row
        allowing at least one action; ``tie_breaks``: float64 ``(B,)`` in [0, 1), the number each
        row's tie-break uses (drawn from this agent's generator when not given). Every array must
        be C-contiguous; a ``ValueError`` says which is not as expected, or which row is not a
        decision (a mask that allows nothing, an observation the heuristic cannot read).
        """
        if not isinstance(observations, np.ndarray) or observations.ndim != 2:
            raise ValueError(
                f"observations: expected a 2-d numpy array (B, {OBS_SIZE}), got "
                f"{getattr(observations, 'shape', type(observations).__name__)}"
            )
        batch = observations.shape[0]
        check_batch_array("observations", observations, np.float32, (batch, OBS_SIZE))
        check_batch_array("masks", masks, np.int8, (batch, NUM_ACTIONS))
        if out is None:
            out = np.empty(batch, dtype=np.int64)
        else:
            check_batch_array("out", out, np.int64, (batch,))
            if not out.flags.writeable:
                raise ValueError("out: the array is read-only")
        tie_breaks = self._tie_break_numbers(batch, tie_breaks)
        bad = heuristic_actions(observations, masks, tie_breaks, self._params, out)
        if bad >= 0:
            if out[bad] == NO_LEGAL:
                raise ValueError(f"masks: row {bad} allows no action: that observation is not a decision")
            raise ValueError(f"observations: row {bad} is not a decision observation the heuristic can read")
        return out

    def act_at(
        self,
        states: np.ndarray,
        p: np.ndarray,
        rows: np.ndarray,
        scratch: np.ndarray,
        tie_breaks: np.ndarray | None = None,
        threads: int = 1,
    ) -> np.ndarray:
        """The action of the seat to act at each of ``rows`` of a ``BatchGame`` (``states``, ``params``, ``scratch``),
        int64 ``(len(rows),)``: what ``act`` returns for those seats' observations and masks, with the same
        tie-break numbers, without building them as arrays; on up to ``threads`` of numba's threads
        (``bourre_env.batch.row_chunks``), with the same actions. ``ValueError`` for a row where no one is to act, or
        a thread count outside 1..``bourre_env.batch.max_threads()``."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        if rows.ndim != 1 or (rows.size and not (rows.min() >= 0 and rows.max() < states.shape[0])):
            raise ValueError(f"rows: expected row indices in 0..{states.shape[0] - 1}")
        out = np.empty(rows.shape[0], dtype=np.int64)
        tie_breaks = self._tie_break_numbers(rows.shape[0], tie_breaks)
        chunks = row_chunks(check_threads(threads), rows.shape[0])
        if chunks > 1:
            with on_threads(chunks):
                bad = heuristic_actions_at_threads(states, p, rows, scratch, tie_breaks, self._params, out, chunks)
        else:
            bad = heuristic_actions_at(states, p, rows, scratch, tie_breaks, self._params, out)
        if bad >= 0:
            if out[bad] == NO_LEGAL:
                raise ValueError(f"rows: no one is to act at row {int(rows[bad])}")
            raise ValueError(f"rows: row {int(rows[bad])} is not a decision the heuristic can read")
        return out

    def _tie_break_numbers(self, batch: int, tie_breaks: np.ndarray | None) -> np.ndarray:
        """The caller's tie-break numbers, checked, or ``batch`` new ones from this agent's generator."""
        if tie_breaks is None:
            if self._tie_breaks.shape[0] != batch:
                self._tie_breaks = np.empty(batch, dtype=np.float64)
            return self.rng.random(out=self._tie_breaks)
        check_batch_array("tie_breaks", tie_breaks, np.float64, (batch,))
        if batch and not (tie_breaks.min() >= 0.0 and tie_breaks.max() < 1.0):
            raise ValueError("tie_breaks: expected numbers in [0, 1)")
        return tie_breaks
