"""The cinch decided exactly, without a budget: the exhaustive search against checks that share none of its code.

1. A corpus of hard positions (``CORPUS``): every position where the search before issue 60 ran out of its
   100,000-node budget in ``benchmarks/cinch_budget.py``'s sweeps (3, 5 and 8 players, full deck, 3,000 deals;
   3 players, six ranks, 6,000 deals; seed 0), and the slowest questions of the exact search in the same sweeps
   (``--corpus``). Each is replayed from its deal's reset seed and actions. The core's answer is checked:
   a refutation (no cinch) by the line the exhaustive search finds (``cinch_search.refuting_line``), played out
   under the rules of ``tests/oracle.py`` from hands completed consistently with every earlier play; a cinch by
   the reference search (``tests/reference_cinch.py``) with a budget that settles it (slow: it compiles the
   reference).
2. Property tests: random small positions (2-3 players, 3-5 ranks), ``has_cinch`` and the exhaustive search
   alone against ``oracle.cinch_exhaustive`` (the definition of docs/rules.md, taken literally).
3. The two 8-player positions of ``tests/golden/cinch_past_the_guard.json``, where the exact search ran past its
   guard before it bounded with the live cards and ordered the opponents' plays as it does now: answered in a few
   hundred nodes, the refutation checked by its line, the cinch by the argument that proves it.
4. The wall-clock guard raises when a question runs past its limit, and never answers in its place.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

import bourre_env
from bourre_env import core
from bourre_env.core import cinch_search
from bourre_env.core.rules import CINCH_TRICKS, Rules
from tests import oracle
from tests.oracle import CinchView, TrickRules

# players, ranks, reset seed, seat, the core's answer (a cinch), the deal's actions before the question; the first 23
# ran out of the old budget; the last four are the slowest questions of the sweeps after the exhaustive search took
# the live bounds and its ordering (issue 60). The nodes are the exact search's, probes included ("before": the
# search before that change)
CORPUS: list[tuple[int, int, int, int, bool, str]] = [
    (5, 13, 2311, 3, False, "79 78 80 70 65 4 5 6 13 9"),  # 167 nodes (before: 335)
    (5, 13, 2330, 4, True, "69 57 74 78 71 19 20 22 33 14 13 26 8 49 23 2 39 48"),  # 236 nodes (before: 929)
    (5, 13, 2566, 2, True, "69 64 81 69 74 0 10 2 23 8 13 24 31 49 15 26 37 29 7"),  # 153 nodes (before: 2,055)
    (5, 13, 2566, 2, True, "69 64 81 69 74 0 10 2 23 8 13 24 31 49 15 26 37 29 7 20"),  # 107 nodes (before: 1,659)
    (8, 13, 494, 2, False, "79 77 72 82 64 64 83 57 27 32 37 26 36 40 38"),  # 182 nodes (before: 1,120)
    # 73 nodes (before: 625)
    (
        8,
        13,
        1695,
        0,
        True,
        "56 81 76 74 57 56 68 58 15 17 25 19 30 24 14 16 44 50 41 43 48 35 40 51 26 6 36 31 34 27 38 37 "
        "29 0 8 47 23 49 21 11",
    ),
    (8, 13, 1826, 0, False, "72 81 80 65 71 65 54 67"),  # 179 nodes (before: 1,571)
    (8, 13, 2213, 6, False, "81 65 61 53 84 82 81 84 18 24 15 23 21"),  # 96 nodes (before: 292)
    # 73 nodes (before: 549)
    (
        8,
        13,
        2365,
        2,
        True,
        "81 84 65 68 84 64 73 61 13 25 47 24 23 15 20 14 21 50 48 27 1 18 26 41 33 32 30 37 36 38 31 6 16 "
        "0 9 7 11 42 5 49",
    ),
    (3, 6, 961, 0, True, "66 56 53"),  # 2,447 nodes (before: 3,748)
    (3, 6, 1690, 2, True, "79 79 71 9"),  # 1,267 nodes (before: 1,718)
    (3, 6, 1753, 1, True, "74 81 54"),  # 3,143 nodes (before: 3,739)
    (3, 6, 2486, 0, True, "63 83 71"),  # 456 nodes (before: 1,345)
    (3, 6, 2987, 0, True, "75 64 54 49"),  # 1,857 nodes (before: 2,771)
    (3, 6, 3159, 0, True, "56 59 73 38 22"),  # 944 nodes (before: 1,564)
    (3, 6, 4042, 0, True, "68 66 83 49 50"),  # 1,421 nodes (before: 2,074)
    (3, 6, 4612, 0, True, "64 71 77"),  # 2,384 nodes (before: 3,923)
    (3, 6, 4672, 0, True, "58 64 80 46"),  # 1,656 nodes (before: 2,304)
    (3, 6, 4735, 2, True, "55 64 63 7 12"),  # 1,753 nodes (before: 2,591)
    (3, 6, 5159, 1, True, "84 78 62 20"),  # 1,093 nodes (before: 1,807)
    (3, 6, 5436, 2, True, "77 64 60 12 51"),  # 831 nodes (before: 1,091)
    (3, 6, 5723, 1, True, "78 73 60 33"),  # 1,474 nodes (before: 2,095)
    (3, 6, 5826, 2, True, "73 78 61"),  # 543 nodes (before: 2,106)
    (3, 13, 1899, 0, True, "77 55 72 26 25 20 14 21 23 13"),  # 206 nodes (before: 824)
    (3, 13, 133, 0, False, "54 76 64 47"),  # 9 nodes (before: 9)
    (3, 13, 1117, 2, False, "81 80 55 18 47 22 13 17 36 9 10 0 26"),  # 3 nodes (before: 3)
    (5, 13, 2603, 3, False, "73 71 82 68 60 18 50 34 45 38"),  # 110 nodes (before: 170)
    (5, 13, 2292, 4, False, "67 77 64 82 74"),  # 63 nodes (before: 63)
    (5, 13, 1867, 3, False, "70 69 80 57 74 37 51 34 38 29 23 13 31 14 15 28 44 9 30 43"),  # 11 nodes (before: 11)
    (8, 13, 72, 4, False, "70 72 63 60 67 83 71 77 22 25 16 20 5 18 15 8"),  # 177 nodes (before: 7,637)
    (8, 13, 526, 2, False, "59 65 78 79 81 67 71 61 2 11 33 0 5 10 7 4"),  # 171 nodes (before: 7,082)
    (8, 13, 660, 4, False, "75 71 84 80 83 84 52 57 30 28 35 37 38 36 5 6 21 11"),  # 12 nodes (before: 12)
    (3, 6, 5308, 2, False, "57 76 74"),  # 10 nodes (before: 10)
    (3, 6, 4581, 0, False, "82 64 60 22"),  # 170 nodes (before: 834)
    (3, 6, 4755, 0, False, "78 72 59 22 24 21"),  # 139 nodes (before: 421)
    (8, 13, 1234, 3, False, "65 57 58 53 81 63 78 62 9 10 7 3"),  # 1,880 nodes
    (8, 13, 1669, 3, False, "73 80 70 60 76 63 82 54 1"),  # 1,362 nodes
    (3, 6, 2523, 2, True, "53 83 83 11"),  # 4,305 nodes
    (3, 6, 2734, 0, True, "62 63 56"),  # 3,198 nodes
]


def bits(mask: int) -> set[int]:
    return {c for c in range(core.NUM_CARDS) if (int(mask) >> c) & 1}


def replay(players: int, ranks: int, seed: int, actions: str) -> tuple[np.ndarray, np.ndarray, Rules]:
    """The state of a corpus position: its deal reset and its actions stepped, each legal when taken."""
    env = bourre_env.env(num_players=players, ranks=ranks)
    raw = env.unwrapped
    env.reset(seed=seed)
    for action in map(int, actions.split()):
        assert action in raw.legal_actions()
        env.step(action)
    assert raw.state_vector[core.S_PHASE] == core.PLAY
    return raw.state_vector.copy(), raw.rules.params(), raw.rules


def view_of(s: np.ndarray, p: np.ndarray, seat: int, rules: Rules) -> CinchView:
    """What ``seat`` knows of the deal, in the oracle's terms, read from the state's record of the deal."""
    n = rules.num_players
    active = tuple(q for q in range(n) if s[core.S_DECISION + q] == core.PLAYING)
    t = int(s[core.S_TRICK_NO])

    def trick_of(k: int, leader: int) -> tuple[tuple[int, int], ...]:
        i = active.index(leader)
        order = active[i:] + active[:i]
        row = core.S_TRICK_CARDS + k * core.MAX_PLAYERS
        return tuple((q, int(s[row + q])) for q in order if s[row + q] >= 0)

    history = tuple(trick_of(k, int(s[core.S_TRICK_LEADER + k])) for k in range(t))
    hand = bits(s[core.S_HAND + seat])
    played = bits(s[core.S_PLAYED])
    known_out = bits(s[core.S_KNOWN_OUT + seat])
    known_held: dict[int, frozenset[int]] = {}
    face = int(s[core.S_FACE])
    dealer = int(s[core.S_DEALER])
    if face >= 0 and face not in hand and face not in played and not s[core.S_FACE_RESHUFFLED]:
        in_play = s[core.S_FACE_STATE] == core.FACE_IN_HAND and s[core.S_DECISION + dealer] == core.PLAYING
        if in_play:
            known_held[dealer] = frozenset({face})
        else:
            known_out.add(face)
    return CinchView(
        seat=seat,
        hand=frozenset(hand),
        trump=int(s[core.S_TRUMP]),
        active=active,
        leader=int(s[core.S_LEADER]),
        trick=trick_of(t, int(s[core.S_LEADER])),
        hand_sizes={q: len(bits(s[core.S_HAND + q])) for q in active},
        tricks_won=int(s[core.S_TRICKS + seat]),
        played=frozenset(played),
        deck=frozenset(bits(p[core.P_DECK_MASK])),
        known_out=frozenset(known_out),
        known_held=known_held,
        rules=TrickRules(rules.must_trump_when_cannot_win, rules.lead_trump_honors, tuple(rules.ranks)),
        history=history,
    )


def _plays_of(view: CinchView, line: list[tuple[int, int]]) -> list[tuple[list[int], int, int]]:
    """Every play from the deal's start through ``line``, as (cards before it in its trick, seat, card)."""
    out = []
    for trick in view.history:
        before: list[int] = []
        for q, c in trick:
            out.append((list(before), q, c))
            before.append(c)
    before = []
    for q, c in [*view.trick, *line]:
        out.append((list(before), q, c))
        before.append(c)
        if len(before) == len(view.active):
            before = []
    return out


def _legal_with(view: CinchView, plays: list[tuple[list[int], int, int]], q: int, hand: set[int]) -> bool:
    """Every play of ``q`` legal, each from the hand it held then: ``hand`` (what it holds after the last of
    ``plays``) with the cards it played from then on."""
    mine = [(before, c) for before, seat, c in plays if seat == q]
    for i, (before, c) in enumerate(mine):
        held = hand | {later for _, later in mine[i:]}
        if c not in oracle.ordinary_legal(held, before, view.trump, view.rules):
            return False
    return True


def check_refutation(view: CinchView, line: list[tuple[int, int]]) -> None:
    """``line`` refutes the cinch of ``view.seat``: hands exist for the opponents, with their sizes, from the unseen
    cards and consistent with every play, from which it is a legal line that leaves the seat short of three."""
    me = view.seat
    plays = _plays_of(view, line)
    in_line = {q: {c for q2, c in line if q2 == q} for q in view.active}
    assert in_line[me] <= view.hand
    pool = set(view.unseen()) - {c for _, c in line}
    hands: dict[int, set[int]] = {me: set(view.hand)}
    for q in view.active:
        if q != me:
            hands[q] = in_line[q] | set(view.known_held.get(q, frozenset()))
            assert in_line[q] <= set(view.unseen()) | set(view.known_held.get(q, frozenset()))
    # complete the hands: each card on its own keeps the plays legal or not (a rule's demand is an "any card
    # of ..."), so the cards each seat may take are found one by one, then matched to the free slots
    free = {q: view.hand_sizes[q] - len(hands[q]) for q in view.active if q != me}
    may = {q: sorted(c for c in pool if _legal_with(view, plays, q, (hands[q] - in_line[q]) | {c})) for q in free}
    seats = sorted(free, key=lambda q: len(may[q]))

    def fill(i: int, used: set[int]) -> bool:
        if i == len(seats):
            return True
        q = seats[i]
        rest = [c for c in may[q] if c not in used]
        if len(rest) < free[q]:
            return False
        from itertools import combinations

        for chosen in combinations(rest, free[q]):
            hands[q] |= set(chosen)
            if fill(i + 1, used | set(chosen)):
                return True
            hands[q] -= set(chosen)
        return False

    assert all(free[q] >= 0 for q in free)
    assert fill(0, set()), "no completion of the hands is consistent with the plays"
    frozen = {q: frozenset(h) for q, h in hands.items()}
    assert oracle.consistent_with_plays(view, frozen)
    for q in view.active:
        assert _legal_with(view, plays, q, set(hands[q]) - in_line[q]), f"seat {q}'s plays are not all legal"
    # the line's tricks, then the most the seat could still take
    won = 0
    trick = [c for _, c in view.trick]
    seats_in = [q for q, _ in view.trick]
    mine_in_trick = me in seats_in
    for q, c in line:
        trick.append(c)
        seats_in.append(q)
        mine_in_trick = mine_in_trick or q == me
        if len(trick) == len(view.active):
            won += seats_in[oracle.trick_winner_index(trick, view.trump)] == me
            trick, seats_in, mine_in_trick = [], [], False
    most = won + len(view.hand - in_line[me]) + (1 if trick and mine_in_trick else 0)
    assert view.tricks_won + most < CINCH_TRICKS, (won, most)


def _refuted(s: np.ndarray, p: np.ndarray, seat: int) -> tuple[bool, list[tuple[int, int]]]:
    found, line = cinch_search.refuting_line(s, p, seat)
    return bool(found), [(int(q), int(c)) for q, c in line]


# ====================================================================== the corpus


@pytest.mark.parametrize("position", CORPUS, ids=lambda c: f"{c[0]}p{c[1]}r-{c[2]}-seat{c[3]}")
def test_corpus_position_is_answered_and_a_refutation_holds(position: tuple[int, int, int, int, bool, str]) -> None:
    players, ranks, seed, seat, cinch, actions = position
    s, p, rules = replay(players, ranks, seed, actions)
    x = core.new_scratch()
    assert core.has_cinch_with(s, p, seat, x) == cinch
    assert x[core.X_CINCH_ABORTS] == 0
    found, line = _refuted(s, p, seat)
    assert found == (not cinch), "the exhaustive search alone disagrees with the bounds and probes"
    if found:
        check_refutation(view_of(s, p, seat, rules), line)


@pytest.mark.slow  # compiles the reference (a minute on a cold cache)
@pytest.mark.parametrize("position", [c for c in CORPUS if c[4]], ids=lambda c: f"{c[0]}p{c[1]}r-{c[2]}-seat{c[3]}")
def test_corpus_cinch_is_settled_by_the_reference_with_a_larger_budget(
    position: tuple[int, int, int, int, bool, str],
) -> None:
    from tests import reference_cinch as ref

    players, ranks, seed, seat, _, actions = position
    s, p, _ = replay(players, ranks, seed, actions)
    larger = p.copy()
    larger[core.P_CINCH_BUDGET] = 5_000_000
    x = core.new_scratch()
    assert ref.reference_has_cinch(s, larger, seat, x)
    assert x[core.X_CINCH_ABORTS] == 0, "the reference did not settle it"


# ====================================================================== small positions against the definition


def trick_play_positions(rules: Rules, deals: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """Every active seat's position at every trick-play decision of random legal games."""
    env = bourre_env.env(rules=rules)
    raw = env.unwrapped
    rng = random.Random(seed)
    out = []
    for deal in range(deals):
        env.reset(seed=seed * 1000 + deal)
        s = raw.state_vector
        while s[core.S_PHASE] < core.DEAL_OVER:
            if s[core.S_PHASE] == core.PLAY:
                for q in range(rules.num_players):
                    if s[core.S_DECISION + q] == core.PLAYING:
                        out.append((s.copy(), raw.rules.params(), q))
            env.step(rng.choice(raw.legal_actions()))
    return out


def _small_positions(
    rules: Rules, deals: int, seed: int, limit: int
) -> list[tuple[np.ndarray, np.ndarray, int, CinchView]]:
    """Trick-play positions of random legal games (every active seat's view), small enough to enumerate."""
    out = []
    for s, p, q in trick_play_positions(rules, deals, seed):
        view = view_of(s, p, q, rules)
        if oracle.count_placements(view) <= limit:
            out.append((s, p, q, view))
    return out


SMALL = [
    Rules(num_players=2, ranks=4, hand_size=3),
    Rules(num_players=3, ranks=4, hand_size=3),
    Rules(num_players=3, ranks=5, hand_size=4, must_trump_when_cannot_win=False),
    Rules(num_players=2, ranks=5, hand_size=4, lead_trump_honors=True),
]


@pytest.mark.parametrize("rules", SMALL, ids=repr)
def test_exhaustive_search_matches_the_definition_on_small_positions(rules: Rules) -> None:
    positions = _small_positions(rules, deals=25, seed=11, limit=3000)
    assert len(positions) > 100
    outcomes = set()
    for s, p, seat, view in positions:
        want = oracle.cinch_exhaustive(view)
        assert bool(core.has_cinch(s, p, seat)) == want, (rules, seat, view)
        found, line = _refuted(s, p, seat)
        assert found == (not want), (rules, seat, view)
        if found:
            check_refutation(view, line)
        outcomes.add(want)
    assert outcomes == {True, False}


# ====================================================================== past the guard, and the guard
PAST_THE_GUARD = json.loads((Path(__file__).parent / "golden" / "cinch_past_the_guard.json").read_text())
PAST_RULES = Rules.from_options(**PAST_THE_GUARD["rules"])
REFUTED, CINCH = 0, 1  # the golden positions by their answer


def _past_the_guard(index: int) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """(state, rule parameters, seat, the row's scratch as the sweep left it) of a golden position."""
    position = PAST_THE_GUARD["positions"][index]
    params = bourre_env.BatchGame(1, seed=0, rules=PAST_RULES).params
    state = np.array(position["state"], dtype=np.int64)
    return state, params, int(position["seat"]), np.array(position["scratch"], dtype=np.int64)


def test_the_guard_raises_past_its_limit_and_answers_within_it() -> None:
    s, p, seat, _ = _past_the_guard(CINCH)  # a cinch: the search's second round, unlimited, proves it
    x = core.new_scratch()
    x[core.X_CINCH_LIMIT_US] = 1  # the clock is read every 4,096 nodes and before every round after the first
    with pytest.raises(RuntimeError, match="wall-clock limit"):
        core.has_cinch_with(s, p, seat, x)
    x = core.new_scratch()
    assert core.has_cinch_with(s, p, seat, x)  # 0: the default limit, far above what it takes


@pytest.mark.parametrize("index", range(len(PAST_THE_GUARD["positions"])))
def test_positions_that_ran_past_the_guard_are_answered_fast(index: int) -> None:
    """The two 8-player positions of ``tests/test_cinch_speed.py``'s long sweep where the search before the live
    bounds and the ordering of ``cinch_search`` ran past its 10 s guard (one 16.6 s, the other more than 40 s),
    answered now within a tenth of a second and a few thousand nodes."""
    s, p, seat, scratch = _past_the_guard(index)
    scratch[core.X_CINCH_LIMIT_US] = 100_000
    nodes = scratch[core.X_CINCH_NODES]
    cinch = bool(core.has_cinch_with(s, p, seat, scratch))
    assert cinch == (index == CINCH)
    assert scratch[core.X_CINCH_NODES] - nodes < 5_000
    found, line = _refuted(s, p, seat)
    assert found == (not cinch), "the exhaustive search alone disagrees with the bounds and probes"
    if found:
        check_refutation(view_of(s, p, seat, PAST_RULES), line)


def test_the_golden_cinch_by_its_argument() -> None:
    """The cinch of the golden position, checked by the argument that proves it, step by step under the rules of
    ``tests/oracle.py`` (the literal definition is out of reach: 39 unseen cards among 7 opponents).

    Seat 5 has won one trick and led the 8 of trumps (hearts) holding J of diamonds, 7 and J of trumps. The only
    trumps above the 8 that an opponent may hold are the queen (the dealer's kept face-up card, seat 0) and the ace,
    which every seat but seat 1 has proven it does not hold. Seat 0 must head the 8 with the queen; seat 1, holding
    the ace, must then head the queen with it. Either way no trump above the 7 is left in any hand after this trick,
    so the 7 and the J of trumps take a trick each: three tricks.
    """
    s, p, seat, _ = _past_the_guard(CINCH)
    view = view_of(s, p, seat, PAST_RULES)
    trump = view.trump
    queen, ace, eight = (oracle.card_of(r, trump) for r in (10, 12, 6))
    assert view.tricks_won == 1 and view.trick == ((seat, eight),)
    assert view.hand == frozenset({oracle.card_of(9, 1), oracle.card_of(5, 2), oracle.card_of(9, 2)})
    above_eight = {c for c in view.deck if oracle.suit(c) == trump and oracle.rank(c) > oracle.rank(eight)}
    unplayed = above_eight - set(view.played) - set(view.hand)
    assert unplayed == {queen, ace}
    assert view.known_held == {0: frozenset({queen})} and ace in view.unseen()
    rng = random.Random(5)
    base = oracle.random_placement(view, rng)
    assert base is not None
    for q in view.active:  # the ace, moved into seat q's hand in place of one of its cards
        if q in (seat, 1):
            continue
        hands = {k: set(h) for k, h in base.items()}
        swap = next(iter(hands[q] - set(view.known_held.get(q, frozenset()))))
        for k in hands:  # whoever held the ace takes the card given up (none did if it lay out of play)
            if ace in hands[k]:
                hands[k] = (hands[k] - {ace}) | {swap}
        hands[q] = (hands[q] - {swap}) | {ace}
        assert not oracle.consistent_with_plays(view, {k: frozenset(h) for k, h in hands.items()}), q
    order = [6, 7, 0, 1]  # the seats after seat 5 in this trick, up to seat 1
    assert view.active[view.active.index(seat) + 1 :][:2] + view.active[:2] == tuple(order)
    # seats 6 and 7 cannot beat the 8 (neither may hold the queen or the ace), so it is the card to head when seat
    # 0 plays: with the queen and any other card it may hold, the queen is its only legal play; then the ace is seat
    # 1's, if it holds it
    low = [c for c in view.unseen() if c != ace]
    for extra in low:
        assert oracle.ordinary_legal({queen, extra}, [eight], trump, view.rules) == {queen}
        assert oracle.ordinary_legal({ace, extra}, [eight, queen], trump, view.rules) == {ace}
    assert not oracle.refuted_by_random_play(view, rng, 300)
