"""The cinch search's single-path rounds (``bourre_env.core.cinch``): one line of play followed in place, each
other seat answering by one fixed ordering of its options.

``cinch._cinch_search`` first runs ``NUM_PROBE_POLICIES`` rounds without discrepancy, one path each, and nearly always
stops in the first: a counterexample lies on the path its move ordering takes first (about 98% of searches at 5
players, 93% at 7). The generic machinery of a search round (``tests/reference_cinch.py``'s ``_search_round``: a
frame per play, full option lists sorted at each node) made these paths cost most of the time of a random decision,
so ``_probe`` walks the same path in place: the same node tests in the same order, the play the sorted option list
would put first, the same consistency checks. Such a round enters only the nodes of its path: after the first child
of a node fails, the next option would be one discrepancy, so it is cut if there is one, and the round backtracks
without entering another node. So its outcome (found, exhausted where no node on the path had a second option, else
cut) and the budget it spends (one per node entered) follow from the path alone, and ``_probe`` returns both exactly
as ``_search_round(max_disc=0, policy)`` would. ``tests/test_cinch_speed.py`` holds both to the search as it was,
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
def _probe(
    s: np.ndarray, p: np.ndarray, me: int, pool: int, need: int, policy: int, w: np.ndarray, budget: np.ndarray
) -> int:
    """``_search_round(max_disc=0, policy)`` from the root, in place: 1 found, 0 exhausted, 2 cut, 3 out of budget.

    Mirrors the reference's ``_search_round`` step for step (node tests, then the play its options would sort first,
    then the consistency checks), spending ``budget`` as it does. What the search recomputes from the
    trick at every node (its best cards, who is winning it) is kept up to date play by play instead.
    ``w`` is scratch with at least 5 rows of MAX_PLAYERS, and row 6 holds what earlier plays proved
    (``proven_absent``).

    One function on purpose: split into helpers (even ones numba inlines) the loop ran 4-8% slower in
    ``BatchGame.random_play`` (docs/benchmarks.md, "Regressions: asv").
    """
    n = _n(p)
    trick = w[0]
    count = w[1]
    forbid = w[2]
    known = w[3]
    nxt = w[4]  # the next playing seat after each playing seat
    absent = w[6]
    t = s[S_TRICK_NO]
    row = S_TRICK_CARDS + t * MAX_PLAYERS
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
        # the search's sound prune; ``sure_tricks`` counts at most our trumps and our card in this trick,
        # so it is skipped when those cannot reach ``need``
        leading = nplayed == 0
        if (
            mine + popcount(hand & suit_mask(trump)) + in_trick >= need
            and mine + sure_tricks(hand, trick, leader, n, me, led, trump, pool | known_all) >= need
        ) or (
            leading and seat == me and mine + popcount(hand) >= need and _all_sure_leads(hand, pool | known_all, trump)
        ):
            return 2 if cut else 0
        if seat == me:
            options = ordinary_plays(hand, leading, led, best_led, best_trump, trump, must_trump, lead_honors)
            cut = cut or popcount(options) > 1
            c = _strongest(options, trump)
            hand &= ~_bit(c)
        else:
            kn = known[seat]
            free = count[seat] - popcount(kn)
            allowed = pool & ~forbid[seat] if free > 0 else np.int64(0)
            cand = kn | _run_representatives(allowed, pool | gone | kn, hand)
            mine_winning = in_trick == 1 and not leading and winning == me
            c = _first_option(
                cand,
                pool,
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
            cut = cut or popcount(cand) > 1
            if c < 0:
                return 2 if cut else 0
            extra = forbidden_after(c, leading, led, best_led, best_trump, trump, must_trump, lead_honors)
            if (kn & ~_bit(c)) & extra:
                return 2 if cut else 0
            free_after = count[seat] - popcount(kn) - (0 if (kn >> c) & 1 else 1)
            new_pool = pool & ~_bit(c)
            new_forbid = forbid[seat] | extra
            if popcount(new_pool & ~new_forbid) < free_after:
                return 2 if cut else 0
            pool = new_pool
            forbid[seat] = new_forbid
            known[seat] = kn & ~_bit(c)
            known_all &= ~_bit(c)
            count[seat] -= 1
        # the trick so far, as ``_bests`` and ``trick_winner`` would find it
        if leading:
            led = c // 13
            winning = seat
        elif _beats(c, led, best_led, best_trump, trump):
            winning = seat
        if c // 13 == led and c > best_led:
            best_led = c
        if c // 13 == trump and c > best_trump:
            best_trump = c
        trick[seat] = c
        nplayed += 1
        seat = nxt[seat]
        depth += 1
