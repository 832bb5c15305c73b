"""The fast cinch check gives the answers of the search it speeds up, on every position tried.

The exact search of ``core.has_cinch`` now walks its single-path rounds in place (``cinch_probe._probe``)
and some of its helpers were rewritten for speed (``_run_representatives``, ``_hands_completable``).
``tests/reference_cinch.py`` keeps the cinch code as it was before; here the two are compared:

1. the rewritten helpers against the originals: every arrangement of a suit for the run
   representatives, random structured inputs for Hall's condition;
2. ``has_cinch`` against ``reference_has_cinch`` for every active seat (not only the seat to act)
   at every trick-play decision of random games: 2..8 players, small decks, several hand sizes,
   both ``must_trump_when_cannot_win``, ``lead_trump_honors`` and every preset; half the games
   play their lowest legal card, which keeps high trumps and so brings more cinches;
   with the same work done where the single paths decide (searches, search nodes); where every single path
   is cut, the core's exhaustive search (no budget, ``cinch_search``) and the reference's rounds of limited
   discrepancy (a budget of 100,000 nodes) give the same answer whenever the reference settles it;
3. where the reference searches, each of its single-path rounds against ``cinch_probe._probe`` under the
   same ordering: the same outcome (found, exhausted, cut) and the same budget spent.

The default run takes a few seconds once compiled; ``-m slow`` runs the long sweep (over 10^6 queries).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from bourre_env import core
from bourre_env.batch import BatchGame, _after_move, _random_move
from bourre_env.core import cinch_bounds, cinch_options, cinch_probe
from bourre_env.core.rules import CINCH_TRICKS, Rules, presets
from tests import reference_cinch as ref

# ====================================================================== rewritten helpers


@njit(cache=True)
def _reps_mismatches_in_suit(suit: int) -> int:
    """Every arrangement of one suit (each card allowed, passable, or a breaker held by us or by no one)."""
    bad = 0
    for code in range(3**13):
        allowed = np.int64(0)
        passable = np.int64(0)
        mine = np.int64(0)
        x = code
        for r in range(13):
            kind = x % 3
            x //= 3
            bit = np.int64(1) << (13 * suit + r)
            if kind == 0:
                allowed |= bit
                passable |= bit
            elif kind == 1:
                passable |= bit
            else:
                mine |= bit
        # the breakers held by us, then the same cards held by no one we know of (not passable)
        for hand, pas in ((mine, passable), (np.int64(0), passable | ~core.ALL_CARDS)):
            if cinch_options._run_representatives(allowed, pas, hand) != ref._run_representatives(allowed, pas, hand):
                bad += 1
    return bad


@pytest.mark.parametrize("suit", range(4))
def test_run_representatives_on_every_arrangement_of_a_suit(suit: int) -> None:
    assert _reps_mismatches_in_suit(suit) == 0


def test_run_representatives_on_random_hands() -> None:
    rng = np.random.default_rng(5)
    for _ in range(20_000):
        allowed, passable, hand = (int(v) for v in rng.integers(0, 1 << 52, size=3))
        passable |= allowed
        hand &= ~allowed
        assert cinch_options._run_representatives(allowed, passable, hand) == ref._run_representatives(
            allowed, passable, hand
        )


def _random_constraints(rng: np.random.Generator, n: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """A pool and per-seat hand counts, forbidden cards and known cards shaped like the search's: forbidden
    cards are whole suits and the cards of a suit above some card; hands are often nearly as large as the
    cards they may come from, so that Hall's condition fails in good numbers."""
    pool = int(rng.integers(0, 1 << 52)) & int(rng.integers(0, 1 << 52))
    count = np.zeros(core.MAX_PLAYERS, dtype=np.int64)
    forbid = np.zeros(core.MAX_PLAYERS, dtype=np.int64)
    known = np.zeros(core.MAX_PLAYERS, dtype=np.int64)
    for q in range(n):
        for _ in range(int(rng.integers(0, 4))):
            suit = int(rng.integers(4))
            if rng.random() < 0.5:
                forbid[q] |= int(core.suit_mask(suit))
            else:
                forbid[q] |= int(core.above_mask(13 * suit + int(rng.integers(13))))
        count[q] = int(rng.integers(0, 7))
    if rng.random() < 0.3:
        q = int(rng.integers(n))
        known[q] = 1 << int(rng.integers(52))
        pool &= ~int(known[q])
        count[q] = max(count[q], 1)
    return pool, count, forbid, known


@pytest.mark.slow  # compiles the reference (a minute on a cold cache); tests/test_oracle.py checks the cinch in CI
def test_hands_completable_matches_the_reference() -> None:
    rng = np.random.default_rng(7)
    outcomes = set()
    for _ in range(30_000):
        n = int(rng.integers(2, 9))
        me = int(rng.integers(n))
        pool, count, forbid, known = _random_constraints(rng, n)
        count[me] = 0
        want = ref._hands_completable(pool, count, forbid, known, n, me)
        assert cinch_bounds._hands_completable(pool, count, forbid, known, n, me) == want, (
            pool,
            count,
            forbid,
            known,
            me,
        )
        outcomes.add(bool(want))
    assert outcomes == {True, False}


# ====================================================================== has_cinch against the reference

# counters of one comparison run
QUERIES, SEARCHED, FALLBACK, CINCHES, ABORTS, MISMATCHES, PROBE_CHECKS, PROBE_MISMATCHES, STAT_MISMATCHES = range(9)


@njit(cache=True)
def _compare_games(
    states: np.ndarray,
    p: np.ndarray,
    rngs: np.ndarray,
    template: np.ndarray,
    decisions: int,
    low_rows: int,
    counts: np.ndarray,
    bad: np.ndarray,
) -> None:
    """Random play in every row (the first ``low_rows`` rows play their lowest legal card); before each trick-play
    decision, ``has_cinch`` of every active seat against the reference. The first mismatch is copied to ``bad``
    (its state, then the seat in the last column)."""
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    rewards = np.zeros(p[core.P_NUM_PLAYERS], dtype=np.float32)
    n = p[core.P_NUM_PLAYERS]
    for b in range(states.shape[0]):
        s = states[b]
        x = np.zeros(core.SCRATCH_SIZE, dtype=np.int64)  # the row's cinch memo and search statistics
        for _ in range(decisions):
            if s[core.S_PHASE] == core.PLAY:
                for q in range(n):
                    if s[core.S_DECISION + q] != core.PLAYING:
                        continue
                    _compare_one(s, p, q, x, counts, bad)
            if s[core.S_PHASE] == core.PLAY and b < low_rows:
                core.step_with(s, p, core.lowest_card(core.play_legal_with(s, p, s[core.S_CUR], True, x)), x)
            else:
                _random_move(s, p, rngs[b], mask, x)
            rewards[:] = 0.0
            _after_move(s, p, rngs[b], template, rewards, x)


@njit(cache=True)
def _compare_one(s: np.ndarray, p: np.ndarray, seat: int, x: np.ndarray, counts: np.ndarray, bad: np.ndarray) -> None:
    """``has_cinch`` of ``seat`` (with the row's scratch ``x``) against the reference; where the reference
    searches, its single-path rounds against ``_probe``. Where every single path is cut, the core's exhaustive
    search and the reference's discrepancy rounds decide, with different node counts; where the reference then
    runs out of its budget its answer is a guess, and the core's is not compared to it (the corpus of
    ``tests/test_cinch_exact.py`` checks those positions independently)."""
    before = x.copy()
    xr = np.zeros(core.SCRATCH_SIZE, dtype=np.int64)  # the reference's statistics of this query
    want = ref.reference_has_cinch(s, p, seat, xr)
    got = core.has_cinch_with(s, p, seat, x)  # as the env and the batch ask it (memo included)
    counts[QUERIES] += 1
    counts[CINCHES] += want
    counts[ABORTS] += xr[core.X_CINCH_ABORTS]
    if got != want and xr[core.X_CINCH_ABORTS] == 0:
        counts[MISMATCHES] += 1
        if bad[-1] < 0:
            bad[:-1] = s
            bad[-1] = seat
    # the same work where the single paths decide: searches and search nodes (a search is run afresh, not
    # memoised); the core never gives up
    fallback = False
    if xr[core.X_CINCH_SEARCHES] > 0:
        counts[SEARCHED] += 1
        fallback = _probes_match(s, p, seat, counts)
    if x[core.X_CINCH_SEARCHES] - before[core.X_CINCH_SEARCHES] != xr[core.X_CINCH_SEARCHES]:
        counts[STAT_MISMATCHES] += 1
    if not fallback and x[core.X_CINCH_NODES] - before[core.X_CINCH_NODES] != xr[core.X_CINCH_NODES]:
        counts[STAT_MISMATCHES] += 1
    if x[core.X_CINCH_ABORTS] != before[core.X_CINCH_ABORTS]:
        counts[STAT_MISMATCHES] += 1


@njit(cache=True)
def _probes_match(s: np.ndarray, p: np.ndarray, seat: int, counts: np.ndarray) -> bool:
    """Each single-path round of the reference against ``_probe`` under the same ordering (the same outcome and
    budget spent); True if every one was cut (the fallback decides)."""
    need = CINCH_TRICKS - s[core.S_TRICKS + seat]
    pool = core.unseen_cards(s, p, seat)
    w = np.empty((7, core.MAX_PLAYERS), dtype=np.int64)  # ``_probe``'s scratch; row 6: what earlier plays proved
    core.proven_absent(s, p, w[6])
    mine = np.full(1, p[core.P_CINCH_BUDGET], dtype=np.int64)
    theirs = np.full(1, p[core.P_CINCH_BUDGET], dtype=np.int64)
    for policy in range(core.NUM_PROBE_POLICIES):
        counts[PROBE_CHECKS] += 1
        code = ref.reference_first_round(s.copy(), p, seat, need, policy, theirs)
        if cinch_probe._probe(s, p, seat, pool, need, policy, w, mine) != code or mine[0] != theirs[0]:
            counts[PROBE_MISMATCHES] += 1
        if code != 2:
            return False
    counts[FALLBACK] += 1  # every single path was cut: the exhaustive search decides
    return True


def compare(rules: Rules, games: int, decisions: int, seed: int) -> np.ndarray:
    """Counters of a comparison run (``QUERIES`` ...); asserts that nothing differs from the reference."""
    g = BatchGame(games, seed=seed, rules=rules)
    counts = np.zeros(9, dtype=np.int64)
    bad = np.full(core.STATE_SIZE + 1, -1, dtype=np.int64)
    _compare_games(g.states, g.params, g._rngs, g._template, decisions, games // 2, counts, bad)
    assert counts[MISMATCHES] == 0, (
        f"{counts[MISMATCHES]} answers differ from the reference under {rules!r}; "
        f"the first, seat {bad[-1]}: state {bad[:-1].tolist()}"
    )
    assert counts[PROBE_MISMATCHES] == 0, f"{counts[PROBE_MISMATCHES]} single-path rounds differ from the reference's"
    assert counts[STAT_MISMATCHES] == 0, f"{counts[STAT_MISMATCHES]} searches did different work (or gave up)"
    return counts


def _settings() -> list[Rules]:
    """Rule sets for the comparison: every player count, small decks and hands, the trick-play options, presets."""
    out = [Rules(num_players=n) for n in range(2, 9)]
    out += [
        Rules(num_players=2, ranks=6),
        Rules(num_players=2, ranks=4, hand_size=3),
        Rules(num_players=3, ranks=5),
        Rules(num_players=3, ranks=6, hand_size=4),
        Rules(num_players=4, ranks=7, hand_size=4, lead_trump_honors=True),
        Rules(num_players=2, hand_size=6, ranks=6),
        Rules(num_players=6, hand_size=6),
        Rules(num_players=4, hand_size=3),
        Rules(num_players=5, must_trump_when_cannot_win=False),
        Rules(num_players=3, ranks=6, must_trump_when_cannot_win=False),
        Rules(num_players=5, lead_trump_honors=True),
        Rules(num_players=7, lead_trump_honors=True, must_trump_when_cannot_win=False),
        Rules(num_players=3, ranks=5, lead_trump_honors=True, must_trump_when_cannot_win=False),
    ]
    out += [rules.replace(num_players=n) for rules in presets.values() for n in (3, 6)]
    return out


SETTINGS = _settings()


@pytest.mark.slow  # as above
def test_has_cinch_matches_the_reference() -> None:
    """Every setting, a short run each; together they reach searched positions, cinches (found by the bounds or
    the search) and positions where every single path is cut and the discrepancy rounds decide."""
    total = np.zeros(9, dtype=np.int64)
    for i, rules in enumerate(SETTINGS):  # about 59,000 queries; the slow test below runs 100 times as many
        total += compare(rules, games=4, decisions=120, seed=3 + i)
    assert total[QUERIES] > 50_000
    assert total[SEARCHED] > 30_000
    assert total[CINCHES] > 1_500
    assert total[FALLBACK] > 300


@pytest.mark.slow
@pytest.mark.parametrize("rules", SETTINGS, ids=repr)
def test_has_cinch_matches_the_reference_long(rules: Rules) -> None:
    """About 6 * 10^6 queries over all the settings."""
    counts = compare(rules, games=128, decisions=400, seed=1000 + SETTINGS.index(rules))
    assert counts[QUERIES] > 5_000
