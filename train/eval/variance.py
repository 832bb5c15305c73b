"""A variance-reduced replacement advantage: control variates at the chance events, in the manner of AIVAT.

``evaluate(..., variance_reduction=VarianceReduction())`` (``bourre eval --aivat``) reports it beside the plain
replacement advantage of ``train.eval.duplicate``, never instead of it (``TableReport.variance_reduced``).

Where the luck is
-----------------
A duplicate pair (the candidate's table of rotation ``r`` and the all-field table) shares the deck, the dealer and
every agent's random stream, so the two tables play the same game until the candidate in seat ``r`` acts otherwise
than the field's agent would. From then on the stock is taken at other positions and the two tables draw other
cards: the replacement advantage ``c[r][r] - b[r]`` carries the luck of every later draw, at both tables. It also
varies with the deal itself: how much the candidate gains over the field depends on the hands.

The correction at a draw
------------------------
The deck is a uniform shuffle and an agent sees only cards already dealt or drawn, so whatever a table has done
before a draw is a function of the deck's first cards (and of the agents' seeds): the cards left in the stock are
in uniformly random order given it. Write ``U(s)`` for the state ``s`` with its unseen stock (positions
``S_STOCK_POS`` to ``S_STOCK_LEN``) put in a fresh uniform order, and ``V(s)`` for the mean over ``resamples``
rollouts (``agents.search.rollout``: the compiled heuristic by default) of a seat's chips from ``U(s)``. At a
draw, with ``s`` the state before it and ``a`` the stay action (discards) that draws,

    correction = V(state after the real draw) - mean over k of rollout(U(step(U_k(s), a)))

the second term being the rollouts after ``resamples`` draws of the same action from re-ordered stocks. Given
everything before the draw, the real draw and each resampled one have the same distribution, so the correction has
mean 0 whatever the rollouts are; subtracting the sum of a table's corrections from its chips keeps every
expectation and removes the part of the draws' luck that the rollouts predict. ``V`` re-orders the stock before it
rolls out because it must be blind to the cards still to come: a value that read them would count the luck of the
later draws once more at each earlier draw.

The correction at the deal
--------------------------
The deal (hands, turned card and stock) is a chance event too, shared by the two tables of a pair. With one value
function for both tables its correction is the same number at both and cancels in ``c[r][r] - b[r]``, so it is
left out. With ``candidate_value`` (the candidate's seat at its own tables played by another rollout kind, e.g. the
shipped network when it is the candidate; the other seats by ``value``) the two differ, and the deal gets a
correction: ``V`` of the deal as dealt minus the mean of ``V`` over ``resamples`` fresh uniform decks (same
dealer, same reshuffle seed), the same decks for every table of the deal. The draws at the candidate's tables are
then valued with the candidate's model too. This is what removes the part of the variance that comes from the
hands themselves; it costs rollouts of the candidate's model.

The estimate
------------
The corrected replacement advantage of a deal is

    mean over r of ((c[r][r] - C_r[r]) - (b[r] - C_field[r]))

with ``C_r`` the corrections summed over the events of the table of rotation ``r`` (only the candidate's seat of
it is valued) and ``C_field`` those of the all-field table, for each seat. When the remaining stock has at most
``resamples`` orders every order is taken once instead of drawing them, so the resampled mean is exact:
``tests/test_variance.py`` checks the mean of the corrected estimate against the plain one's exactly, over every
order of the stock of a small deck.

What is not corrected, and why
------------------------------
* A draw from a stock rebuilt by the reshuffle (the stock ran out: 7 players and more): its order is fixed by the
  deal's reshuffle seed, which the estimator conditions on, so nothing is left to chance there.
* A stay that discards nothing: no card is drawn.
* The agents' own random choices (the heuristic's tie-breaks): an agent answers with an action, not with its
  probabilities, which a correction there would need.

The same event at two tables valued the same way (every draw before the candidate first departs from the field,
without ``candidate_value``) gets the same correction (it is computed once per deal), so those cancel exactly, and a
candidate that is the field's agent scores exactly 0, as the plain estimate does. The random draws of the estimator
come from their own seed, ``(seed, N, chunk)``: the report is reproducible and does not depend on the workers.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numba import njit

from agents.search.policy import observe_rows, policy_path
from agents.search.rollout import ROLLOUT_KINDS, Rollout
from bourre_env import core, observation, view
from bourre_env.atomic_files import check_readable_file
from bourre_env.core.rules import Rules
from train.eval.statistics import t_interval
from train.table import Decision, Observer

__all__ = [
    "ROOT",
    "Draw",
    "DrawCorrector",
    "DrawRecorder",
    "ValueFunction",
    "VarianceReduced",
    "VarianceReduction",
    "is_draw",
]

Draw = tuple[np.ndarray, int]
"""An event recorded by ``DrawRecorder``: the state before a draw and its stay action, or the state as dealt and
``ROOT``."""

ROOT = -1
"""The action of the ``Draw`` that records the state of a deal as dealt, before anyone acts."""

ValueFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``value(states (B, STATE_SIZE), params) -> (B, N)`` chips of every seat: any function of the states will do."""


def _check_value(value: object, name: str) -> None:
    if isinstance(value, str):
        base = value.partition(":")[0]
        if base not in ROLLOUT_KINDS or (base != "ppo" and value != base):
            raise ValueError(f"{name}: expected one of {ROLLOUT_KINDS} or 'ppo:PATH', got {value!r}")
        if base == "ppo":
            try:
                check_readable_file(policy_path(value), "policy file")
            except ValueError as err:
                raise ValueError(f"{name}: {err}") from None
    elif not callable(value):
        raise ValueError(f"{name}: expected a rollout kind or a function (states, params) -> chips, got {value!r}")


def _label(value: str | ValueFunction) -> str:
    return value if isinstance(value, str) else getattr(value, "__name__", type(value).__name__)


@dataclasses.dataclass(frozen=True)
class VarianceReduction:
    """Settings of the corrections (module docstring).

    ``value`` models the field: a rollout kind (``agents.search.rollout.ROLLOUT_KINDS``, or ``"ppo:PATH"``) played
    by every seat, or a ``ValueFunction``. ``candidate_value``, if given, models the candidate in its seat at its
    own tables (the other seats still by ``value``): the corrections then also cover the deal itself. ``resamples``
    is the number of rollouts in each term of a correction."""

    value: str | ValueFunction = "heuristic"
    resamples: int = 32
    candidate_value: str | ValueFunction | None = None

    def __post_init__(self) -> None:
        _check_value(self.value, "value")
        if self.candidate_value is not None:
            _check_value(self.candidate_value, "candidate_value")
            if isinstance(self.candidate_value, str) and not isinstance(self.value, str):
                raise ValueError(
                    "candidate_value: a rollout kind needs a rollout kind as value, to play the other seats"
                )
        if isinstance(self.resamples, bool) or not isinstance(self.resamples, int) or self.resamples < 1:
            raise ValueError(f"resamples: expected an integer >= 1, got {self.resamples!r}")

    @property
    def label(self) -> str:
        return _label(self.value)


def is_draw(state: np.ndarray, action: int) -> bool:
    """Whether ``action`` is a stay of a draw round (discards, and replacements from the stock)."""
    return view.phase_of(state) in core.DRAW_PHASES and action >= core.STAY_BASE


class DrawRecorder(Observer):
    """The draws of a game, as the loop of ``train.table`` plays it: the state as dealt with ``ROOT``, then the state
    before each stay that draws, with its action, appended to ``draws``."""

    def __init__(self, draws: list[Draw]) -> None:
        self.draws = draws

    def dealt(self, env: Any) -> None:
        self.draws.append((env.unwrapped.state_vector.copy(), ROOT))

    def stepped(self, decision: Decision, action: int, before: np.ndarray, env: Any) -> None:
        if is_draw(before, action):
            self.draws.append((before, action))


def _unseen(state: np.ndarray) -> int:
    """Cards of the dealt stock still to come; 0 once the stock was rebuilt by a reshuffle (its order is fixed)."""
    if view.reshuffles_of(state) != 0:
        return 0
    columns = view.stock_to_come(state)
    return columns.stop - columns.start


@njit(cache=True)
def _step_rows(states: np.ndarray, p: np.ndarray, rows: np.ndarray, actions: np.ndarray, scratch: np.ndarray) -> int:
    """Step ``states[rows[i]]`` with ``actions[i]``; -1, or the first row whose action was refused."""
    for i in range(rows.shape[0]):
        if not core.step_with(states[rows[i]], p, actions[i], scratch[rows[i]]):
            return int(rows[i])
    return -1


class DrawCorrector:
    """The corrections of one chunk's games, seeded by ``seed_key``; see the module docstring."""

    def __init__(self, options: VarianceReduction, rules: Rules, seed_key: Sequence[int]) -> None:
        self.options = options
        self.params = rules.params()
        self.num_players = rules.num_players
        self._deck = np.asarray(rules.deck_cards(), dtype=np.int64)
        sequence = np.random.SeedSequence(list(seed_key))
        self._rng = np.random.default_rng(sequence.spawn(1)[0])
        seeds = sequence.generate_state(2)
        self._field = Rollout(options.value, seed=int(seeds[0])) if isinstance(options.value, str) else None
        candidate = options.candidate_value
        self._candidate = Rollout(candidate, seed=int(seeds[1])) if isinstance(candidate, str) else None
        self.corrected = 0  # distinct draws corrected (statistics)

    def corrections(self, games: Sequence[Sequence[Draw]], seats: Sequence[int]) -> np.ndarray:
        """``(len(games), N)`` float64: each game's corrections summed over its events, for every seat; ``seats[g]``
        is the candidate's seat in game ``g``, -1 at the all-field table.

        An event met in several games (the same state and action, valued the same way) is corrected once and
        counts in each: the draws two tables share before they part get the same correction."""
        with_candidate = self.options.candidate_value is not None
        rows_of: dict[bytes, tuple[np.ndarray, np.ndarray] | None] = {}
        index: dict[tuple[bytes, int], int] = {}
        groups: list[tuple[np.ndarray, np.ndarray, int]] = []  # (real rows, resampled rows, candidate's seat)
        keys: list[list[tuple[bytes, int] | None]] = []
        for game, seat in zip(games, seats, strict=True):
            me = seat if with_candidate else -1
            keys.append([])
            for state, action in game:
                if action == ROOT and not with_candidate:
                    keys[-1].append(None)  # one value for both tables of a pair: the deal's correction cancels
                    continue
                event = state.tobytes() + int(action).to_bytes(2, "little", signed=True)
                if event not in rows_of:
                    rows_of[event] = self._root_rows(state) if action == ROOT else self._draw_rows(state, action)
                    self.corrected += int(action != ROOT and rows_of[event] is not None)
                rows = rows_of[event]
                if rows is None:
                    keys[-1].append(None)
                    continue
                key = (event, me)
                if key not in index:
                    index[key] = len(groups)
                    groups.append((rows[0], rows[1], me))
                keys[-1].append(key)
        per_event = self._per_event(groups)
        out = np.zeros((len(games), self.num_players))
        for g, game_keys in enumerate(keys):
            for game_key in game_keys:
                if game_key is not None:
                    out[g] += per_event[index[game_key]]
        return out

    def _per_event(self, groups: list[tuple[np.ndarray, np.ndarray, int]]) -> np.ndarray:
        """Mean value of the real rows minus mean value of the resampled rows, for each group."""
        out = np.zeros((len(groups), self.num_players))
        if not groups:
            return out
        blocks = [block for real, resampled, _ in groups for block in (real, resampled)]
        me = np.concatenate([np.full(len(block), g[2]) for g in groups for block in g[:2]])
        values = self._values(np.concatenate(blocks), me)
        offset = 0
        for i, (real, resampled, _) in enumerate(groups):
            out[i] = values[offset : offset + len(real)].mean(axis=0)
            offset += len(real)
            out[i] -= values[offset : offset + len(resampled)].mean(axis=0)
            offset += len(resampled)
        return out

    def _draw_rows(self, state: np.ndarray, action: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The states to roll out for one draw: after the real draw, and after resampled draws; ``None`` when the
        draw takes no card of the dealt stock (nothing to correct)."""
        unseen = _unseen(state)
        after = self._step(state, action)
        drawn = unseen if view.reshuffles_of(after) != 0 else view.stock_position(after) - view.stock_position(state)
        if unseen == 0 or drawn == 0:
            return None
        return self._reorder(after), np.stack([self._step(before, action) for before in self._reorder(state)])

    def _root_rows(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The deal as dealt (its stock re-ordered), and ``resamples`` deals of fresh decks (same dealer and
        reshuffle seed)."""
        redealt = np.repeat(state[None], self.options.resamples, axis=0)
        for row in redealt:
            core.start_episode(
                row,
                self.params,
                self._rng.permutation(self._deck),
                view.dealer_of(state),
                0,
                view.rng_state_of(state),
            )
        return self._reorder(state), redealt

    def _step(self, state: np.ndarray, action: int) -> np.ndarray:
        after = state.copy()
        if not core.step_with(after, self.params, action, core.new_scratch()):
            raise RuntimeError(f"a recorded draw could not be replayed: action {action} is illegal in its state")
        return after

    def _reorder(self, state: np.ndarray) -> np.ndarray:
        """``resamples`` copies of ``state`` with the unseen stock in uniformly random orders, or every order once
        when there are at most ``resamples`` of them."""
        columns, unseen = view.stock_to_come(state), _unseen(state)
        if unseen <= 1:
            return state[None].copy()
        cards = state[columns].copy()
        if math.factorial(unseen) <= self.options.resamples:
            orders = [np.asarray(order) for order in itertools.permutations(range(unseen))]
        else:
            orders = [self._rng.permutation(unseen) for _ in range(self.options.resamples)]
        out = np.repeat(state[None], len(orders), axis=0)
        for row, order in zip(out, orders, strict=True):
            row[columns] = cards[order]
        return out

    def _values(self, states: np.ndarray, me: np.ndarray) -> np.ndarray:
        """``(B, N)`` chips of every seat from each state: by the field's model, except rows with ``me >= 0``,
        where seat ``me`` plays by the candidate's model."""
        out = np.zeros((len(states), self.num_players))
        field_rows, mixed_rows = np.flatnonzero(me < 0), np.flatnonzero(me >= 0)
        if field_rows.size:
            out[field_rows] = self._value(self.options.value, self._field, states[field_rows])
        if mixed_rows.size:
            candidate = self.options.candidate_value
            assert candidate is not None
            if self._candidate is None:
                out[mixed_rows] = self._value(candidate, None, states[mixed_rows])
            else:
                out[mixed_rows] = self._mixed(np.ascontiguousarray(states[mixed_rows]), me[mixed_rows])
        return out

    def _value(self, value: str | ValueFunction, rollout: Rollout | None, states: np.ndarray) -> np.ndarray:
        states = np.ascontiguousarray(states)
        if rollout is None:
            function: Any = value
            return np.asarray(function(states, self.params), dtype=np.float64).reshape(len(states), self.num_players)
        rollout.run(states, self.params)
        return states[:, view.rewards_column(0) : view.rewards_column(0) + self.num_players].astype(np.float64)

    def _mixed(self, states: np.ndarray, me: np.ndarray) -> np.ndarray:
        """Rollouts with seat ``me[b]`` of row ``b`` played by the candidate's model, the others by the field's;
        only that seat's chips (the others' are 0): a row stops when they are final (the deal is over, or the seat
        passed), which is all a candidate's table needs."""
        assert self._candidate is not None and self._field is not None
        scratch = np.zeros((len(states), core.SCRATCH_SIZE), dtype=np.int64)
        obs = np.zeros((len(states), observation.OBS_SIZE), dtype=np.float32)
        masks = np.zeros((len(states), core.NUM_ACTIONS), dtype=np.int8)
        every = np.arange(len(states))
        while True:
            phase = states[:, view.phase_column()]
            out_of_it = (states[every, view.decision_column() + me] == core.PASSED) & (phase != core.DECLARE)
            rows = np.flatnonzero((phase < core.DEAL_OVER) & ~out_of_it)
            if rows.size == 0:
                break
            o, m = obs[: rows.size], masks[: rows.size]
            observe_rows(states, self.params, rows, o, m, scratch)
            mine = states[rows, view.to_act_column()] == me[rows]
            actions = np.zeros(rows.size, dtype=np.int64)
            if mine.any():
                actions[mine] = self._candidate.actions(o[mine], m[mine])
            if not mine.all():
                actions[~mine] = self._field.actions(o[~mine], m[~mine])
            bad = _step_rows(states, self.params, rows, actions, scratch)
            if bad >= 0:
                raise RuntimeError(f"a rollout's action was refused in row {bad}")
        out = np.zeros((len(states), self.num_players))
        out[every, me] = states[every, view.rewards_column(0) + me]
        return out


@dataclasses.dataclass(frozen=True)
class VarianceReduced:
    """The variance-reduced replacement advantage of one table size (``TableReport.variance_reduced``).

    ``deals_ratio`` is the corrected per-deal variance over the plain one: the share of the deals the corrected
    estimate needs for an interval as wide as the plain one's (``None`` when the plain variance is 0)."""

    value: str
    candidate_value: str | None
    resamples: int
    replacement_advantage: float
    replacement_advantage_ci95: tuple[float, float] | None
    deals_ratio: float | None
    draws_corrected: int

    @classmethod
    def of(
        cls,
        options: VarianceReduction,
        plain: np.ndarray,
        own_corrections: np.ndarray,
        field_corrections: np.ndarray,
        draws_corrected: int,
    ) -> VarianceReduced:
        """From the plain per-deal replacement advantage ``(deals,)`` and the corrections ``(deals, N)`` of the
        candidate's seat at each rotation's table and of the same seat at the all-field table."""
        n = own_corrections.shape[1]
        corrected = plain - (own_corrections - field_corrections).sum(axis=1) / n
        plain_var = float(plain.var(ddof=1)) if plain.size > 1 else 0.0
        return cls(
            value=options.label,
            candidate_value=None if options.candidate_value is None else _label(options.candidate_value),
            resamples=options.resamples,
            replacement_advantage=float(corrected.mean()),
            replacement_advantage_ci95=t_interval(corrected),
            deals_ratio=float(corrected.var(ddof=1)) / plain_var if plain_var > 0 else None,
            draws_corrected=draws_corrected,
        )
