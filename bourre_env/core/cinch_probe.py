"""The cinch search's single-path rounds (``bourre_env.core.cinch``): one line of play followed in place, each
other seat answering by one fixed ordering of its options.

``_cinch_search`` first runs ``NUM_PROBE_POLICIES`` rounds without discrepancy, one path each, and nearly always
stops in the first: a counterexample lies on the path its move ordering takes first (about 98% of searches at 5
players, 93% at 7). The generic machinery of ``_search_round`` (a frame per play, full option lists sorted at each
node) made these paths cost most of the time of a random decision, so ``_probe`` walks the same path in place: the
same node tests in the same order, the play the sorted option list would put first, the same consistency checks.
Such a round enters only the nodes of its path: after the first child of a node fails, the next option would be
one discrepancy, so it is cut if there is one, and the round backtracks without entering another node. So its
outcome (found, exhausted where no node on the path had a second option, else cut) and the budget it spends (one
per node entered) follow from the path alone, and ``_probe`` returns both exactly as
``_search_round(max_disc=0, policy)`` would. ``tests/test_cinch_speed.py`` holds both to the search as it was,
round by round, on every searched position of its sweeps.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import (
    _bit,
    _n,
    face_bit,
    next_active,
    popcount,
    suit_mask,
)
from bourre_env.core.cinch_bounds import (
    _all_sure_leads,
    _face_held_by_other,
    _gone_for,
    _hands_completable,
    sure_tricks,
)
from bourre_env.core.cinch_options import (
    _first_option,
    _run_representatives,
    _strongest,
)
from bourre_env.core.layout import (
    PLAYING,
    S_CUR,
    S_DEALER,
    S_DECISION,
    S_HAND,
    S_LEADER,
    S_LED,
    S_NPLAYED,
    S_TRICK_CARDS,
    S_TRICK_NO,
    S_TRUMP,
)
from bourre_env.core.rules import (
    MAX_PLAYERS,
    P_HAND_SIZE,
    P_LEAD_HONORS,
    P_MUST_TRUMP,
)
from bourre_env.core.tricks import (
    _beats,
    _bests,
    forbidden_after,
    ordinary_plays,
    trick_winner,
)


@njit(cache=True)
def _probe_setup(s: np.ndarray, n: int, me: int, w: np.ndarray) -> tuple[int, int]:
    """``_probe``'s rows of ``w`` at the root: the trick, each other seat's card count, what it cannot hold (row 6,
    with the current trick's), what is known of its hand, the next playing seat; returns (playing seats, the union
    of what is known)."""
    trick = w[0]
    count = w[1]
    forbid = w[2]
    known = w[3]
    nxt = w[4]  # the next playing seat after each playing seat
    absent = w[6]
    row = S_TRICK_CARDS + s[S_TRICK_NO] * MAX_PLAYERS
    nactive = 0
    for q in range(MAX_PLAYERS):
        trick[q] = s[row + q] if q < n else -1
        count[q] = 0
        forbid[q] = absent[q] if q != me else 0
        known[q] = 0
    for q in range(n):
        if s[S_DECISION + q] == PLAYING:
            nactive += 1
            nxt[q] = next_active(s, n, q)
            if q != me:
                count[q] = popcount(s[S_HAND + q])
    known_all = np.int64(0)  # the union of ``known``
    if _face_held_by_other(s, me):
        known_all = face_bit(s)
        known[s[S_DEALER]] = known_all
    return nactive, known_all


# _trick_after, _probe_sure and _probe_other_play run at every node of _probe: inlined into its loop (numba IR),
# since as calls they cost about 10% of batch random play (BatchGame.random_play, 5 players, measured)
@njit(cache=True, inline="always")
def _trick_after(
    c: int, seat: int, leading: bool, led: int, winning: int, best_led: int, best_trump: int, trump: int
) -> tuple[int, int, int, int]:
    """(suit led, seat winning, best card of the suit led, best trump) of the trick so far after ``seat`` plays
    ``c``, as ``_bests`` and ``trick_winner`` would find them."""
    if leading:
        led = c // 13
        winning = seat
    elif _beats(c, led, best_led, best_trump, trump):
        winning = seat
    if c // 13 == led and c > best_led:
        best_led = c
    if c // 13 == trump and c > best_trump:
        best_trump = c
    return led, winning, best_led, best_trump


@njit(cache=True, inline="always")
def _probe_sure(
    trick: np.ndarray,
    n: int,
    me: int,
    seat: int,
    leader: int,
    led: int,
    trump: int,
    hand: int,
    unseen: int,
    need: int,
    in_trick: int,
    leading: bool,
) -> bool:
    """The search's sound prune in ``_probe``: ``need`` more tricks are sure. ``sure_tricks`` counts at most our
    trumps and our card in this trick, so it is skipped when those cannot reach ``need``."""
    return bool(
        (
            popcount(hand & suit_mask(trump)) + in_trick >= need
            and sure_tricks(hand, trick, leader, n, me, led, trump, unseen) >= need
        )
        or (leading and seat == me and popcount(hand) >= need and _all_sure_leads(hand, unseen, trump))
    )


@njit(cache=True, inline="always")
def _probe_other_play(
    w: np.ndarray,
    seat: int,
    pool: int,
    gone: int,
    hand: int,
    in_trick: bool,
    mine_winning: bool,
    leading: bool,
    led: int,
    best_led: int,
    best_trump: int,
    trump: int,
    must_trump: bool,
    lead_honors: bool,
    policy: int,
    depth: int,
) -> tuple[int, bool]:
    """Another seat's play in ``_probe``, its rows of ``w`` updated: (the card, whether the seat had a second
    option); card -1 where the round stops there (no option, or the play contradicts what is known)."""
    count = w[1]
    forbid = w[2]
    known = w[3]
    kn = known[seat]
    free = count[seat] - popcount(kn)
    allowed = pool & ~forbid[seat] if free > 0 else np.int64(0)
    cand = kn | _run_representatives(allowed, pool | gone | kn, hand)
    c = _first_option(
        cand,
        pool,
        in_trick,
        mine_winning,
        leading,
        led,
        best_led,
        best_trump,
        trump,
        must_trump,
        lead_honors,
        policy,
        depth,
    )
    branches = popcount(cand) > 1
    if c < 0:
        return -1, branches
    extra = forbidden_after(c, leading, led, best_led, best_trump, trump, must_trump, lead_honors)
    if (kn & ~_bit(c)) & extra:
        return -1, branches
    free_after = count[seat] - popcount(kn) - (0 if (kn >> c) & 1 else 1)
    new_pool = pool & ~_bit(c)
    new_forbid = forbid[seat] | extra
    if popcount(new_pool & ~new_forbid) < free_after:
        return -1, branches
    forbid[seat] = new_forbid
    known[seat] = kn & ~_bit(c)
    count[seat] -= 1
    return c, branches


@njit(cache=True)
def _probe(
    s: np.ndarray, p: np.ndarray, me: int, pool: int, need: int, policy: int, w: np.ndarray, budget: np.ndarray
) -> int:
    """``_search_round(max_disc=0, policy)`` from the root, in place: 1 found, 0 exhausted, 2 cut, 3 out of budget.

    Mirrors ``_search_round`` step for step (node tests, then the play ``_options`` would sort first,
    then the consistency checks), spending ``budget`` as it does. What the search recomputes from the
    trick at every node (its best cards, who is winning it) is kept up to date play by play instead.
    ``w`` is scratch with at least 5 rows of MAX_PLAYERS, and row 6 holds what earlier plays proved
    (``proven_absent``).
    """
    n = _n(p)
    trick = w[0]
    count = w[1]
    forbid = w[2]
    known = w[3]
    nxt = w[4]
    t = s[S_TRICK_NO]
    nactive, known_all = _probe_setup(s, n, me, w)
    gone = _gone_for(s, p, me)
    hand = s[S_HAND + me]
    mine = 0
    leader = s[S_LEADER]
    nplayed = s[S_NPLAYED]
    seat = s[S_CUR]
    led = s[S_LED]
    trump = s[S_TRUMP]
    h = p[P_HAND_SIZE]
    must_trump = p[P_MUST_TRUMP] == 1
    lead_honors = p[P_LEAD_HONORS] == 1
    best_led, best_trump = _bests(trick, n, led, trump)
    winning = trick_winner(trick, leader, n, trump) if nplayed > 0 else -1  # the seat winning the trick so far
    depth = 0
    cut = False  # a node on the path had a second option: the round would cut it
    while True:
        budget[0] -= 1
        if budget[0] <= 0:
            return 3
        if nplayed == nactive:
            if winning == me:
                mine += 1
            if mine >= need:
                return 2 if cut else 0
            if t + 1 == h:
                return 1
            trick[:] = -1
            leader = winning
            nplayed = 0
            seat = winning
            led = -1
            best_led = -1
            best_trump = -1
            winning = -1
            t += 1
        in_trick = 1 if trick[me] >= 0 else 0
        if mine + popcount(hand) + in_trick < need and _hands_completable(pool, count, forbid, known, n, me):
            return 1
        leading = nplayed == 0
        if _probe_sure(trick, n, me, seat, leader, led, trump, hand, pool | known_all, need - mine, in_trick, leading):
            return 2 if cut else 0
        if seat == me:
            options = ordinary_plays(hand, leading, led, best_led, best_trump, trump, must_trump, lead_honors)
            cut = cut or popcount(options) > 1
            c = _strongest(options, trump)
            hand &= ~_bit(c)
        else:
            mine_winning = in_trick == 1 and not leading and winning == me
            c, branches = _probe_other_play(
                w,
                seat,
                pool,
                gone,
                hand,
                in_trick == 1,
                mine_winning,
                leading,
                led,
                best_led,
                best_trump,
                trump,
                must_trump,
                lead_honors,
                policy,
                depth,
            )
            cut = cut or branches
            if c < 0:
                return 2 if cut else 0
            pool &= ~_bit(c)
            known_all &= ~_bit(c)
        led, winning, best_led, best_trump = _trick_after(c, seat, leading, led, winning, best_led, best_trump, trump)
        trick[seat] = c
        nplayed += 1
        seat = nxt[seat]
        depth += 1
