"""The cinch's exact search (``bourre_env.core.cinch``): the single-path probes first, then rounds of limited
discrepancy over every option of the other seats, within a node budget.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import (
    _bit,
    _n,
    face_bit,
    popcount,
    suit_mask,
)
from bourre_env.core.cards import (
    NUM_CARDS,
)
from bourre_env.core.cinch_bounds import (
    _all_sure_leads,
    _face_held_by_other,
    _gone_for,
    _hands_completable,
    sure_tricks,
)
from bourre_env.core.cinch_options import (
    _options,
    next_active_arr,
)
from bourre_env.core.cinch_probe import (
    _probe,
)
from bourre_env.core.layout import (
    PLAYING,
    S_CUR,
    S_DEALER,
    S_DECISION,
    S_HAND,
    S_LEADER,
    S_LED,
    S_NACTIVE,
    S_NPLAYED,
    S_TRICK_CARDS,
    S_TRICK_NO,
    S_TRUMP,
    X_CINCH_ABORTS,
    X_CINCH_NODES,
    X_CINCH_SEARCHES,
)
from bourre_env.core.rules import (
    MAX_PLAYERS,
    P_CINCH_BUDGET,
    P_HAND_SIZE,
    P_LEAD_HONORS,
    P_MUST_TRUMP,
)
from bourre_env.core.tricks import (
    _bests,
    forbidden_after,
    trick_winner,
)

NUM_PROBE_POLICIES = 8  # orderings tried as single-path probes before the exhaustive cinch search


@njit(cache=True)
def _cinch_search(s: np.ndarray, p: np.ndarray, me: int, pool: int, need: int, w: np.ndarray, x: np.ndarray) -> bool:
    """True if some consistent placement and legal continuation leaves ``me`` with fewer than ``need`` more tricks.

    Depth-first over every play from now to the end of the deal. ``me``'s cards are known; an
    opponent's hand is the cards it will play, so each opponent card is drawn from the unseen pool
    when played, and everything its play proves it did not hold (a void, no higher card of the
    suit, no trump) is forbidden for its later plays. A branch that reaches the end of the deal is
    therefore a complete, consistent deal. Iterative with an explicit stack (numba cannot cache
    recursive functions). ``w`` is ``_cinch_uncached``'s scratch, its row 6 filled by ``proven_absent``.
    """
    budget = w[5]
    budget[0] = p[P_CINCH_BUDGET]
    # Limited discrepancy search: the move ordering is usually right, so first try the paths that
    # leave it at most ``k`` times, then ``k + 1``... A round that cut no branch was exhaustive.
    # After the first single path, a few more under other orderings: a counterexample is usually
    # plentiful, and one ordering's blind spot (e.g. every opponent spending a trump on our ace) is
    # rarely another's. The single paths are walked in place (``_probe``, see above).
    result = 2
    for policy in range(NUM_PROBE_POLICIES):
        result = _probe(s, p, me, pool, need, policy, w, budget)
        if result != 2:
            break
    if result == 2:
        result = _discrepancy_rounds(s, p, me, pool, need, budget, w[6])
    x[X_CINCH_SEARCHES] += 1
    x[X_CINCH_NODES] += p[P_CINCH_BUDGET] - budget[0]
    if result == 3:
        # Out of budget: no proof either way. Report a counterexample, i.e. no cinch, so that an
        # unproven cinch never forces a player's hand (documented in the README; counted for tests).
        x[X_CINCH_ABORTS] += 1
        return True
    return result == 1


@njit(cache=True)
def _discrepancy_rounds(
    s: np.ndarray, p: np.ndarray, me: int, pool: int, need: int, budget: np.ndarray, absent: np.ndarray
) -> int:
    """The rounds of ``_cinch_search`` after its single paths: ``_search_round`` with at most 1, then 2
    discrepancies, then without limit, until one is not cut. Returns that round's code."""
    n = _n(p)
    # one frame per play left in the deal, plus the root
    depth_max = (p[P_HAND_SIZE] - s[S_TRICK_NO]) * s[S_NACTIVE] + 2
    # One allocation for the whole search: frames of scalars (hand, pool, mine, leader, nplayed,
    # seat, led, t), per-seat arrays and option lists, plus scratch for sorting the options.
    m8 = depth_max * MAX_PLAYERS
    ws = np.empty(5 * m8 + depth_max * NUM_CARDS + 3 * depth_max + MAX_PLAYERS + 2 * NUM_CARDS, dtype=np.int64)
    fs = ws[0:m8].reshape((depth_max, 8))
    trick = ws[m8 : 2 * m8].reshape((depth_max, MAX_PLAYERS))
    count = ws[2 * m8 : 3 * m8].reshape((depth_max, MAX_PLAYERS))
    forbid = ws[3 * m8 : 4 * m8].reshape((depth_max, MAX_PLAYERS))
    known = ws[4 * m8 : 5 * m8].reshape((depth_max, MAX_PLAYERS))
    at = 5 * m8
    opts = ws[at : at + depth_max * NUM_CARDS].reshape((depth_max, NUM_CARDS))
    at += depth_max * NUM_CARDS
    nopt = ws[at : at + depth_max]
    idx = ws[at + depth_max : at + 2 * depth_max]
    disc = ws[at + 2 * depth_max : at + 3 * depth_max]
    at += 3 * depth_max
    active = ws[at : at + MAX_PLAYERS]
    scratch = ws[at + MAX_PLAYERS :].reshape((2, NUM_CARDS))
    trick[0, :] = -1
    count[0, :] = 0
    for q in range(MAX_PLAYERS):
        forbid[0, q] = absent[q] if q != me else 0
    known[0, :] = 0
    active[:] = 0
    disc[0] = 0
    t0 = s[S_TRICK_NO]
    row = S_TRICK_CARDS + t0 * MAX_PLAYERS
    nactive = 0
    for q in range(n):
        trick[0, q] = s[row + q]
        if s[S_DECISION + q] == PLAYING:
            active[q] = 1
            nactive += 1
            if q != me:
                count[0, q] = popcount(s[S_HAND + q])
    if _face_held_by_other(s, me):
        known[0, s[S_DEALER]] = face_bit(s)
    gone = _gone_for(s, p, me)
    fs[0, 0] = s[S_HAND + me]
    fs[0, 1] = pool
    fs[0, 2] = 0
    fs[0, 3] = s[S_LEADER]
    fs[0, 4] = s[S_NPLAYED]
    fs[0, 5] = s[S_CUR]
    fs[0, 6] = s[S_LED]
    fs[0, 7] = t0
    trump = s[S_TRUMP]
    h = p[P_HAND_SIZE]
    must_trump = p[P_MUST_TRUMP] == 1
    lead_honors = p[P_LEAD_HONORS] == 1
    # Two rounds of growing discrepancy, then one exhaustive round: a cinch can only be proven
    # by exhausting the tree, and each further round would re-explore all the previous ones.
    result = 2
    k = 1
    while result == 2:
        result = _search_round(
            fs,
            trick,
            count,
            forbid,
            known,
            opts,
            nopt,
            idx,
            disc,
            active,
            nactive,
            p,
            n,
            me,
            gone,
            trump,
            h,
            need,
            must_trump,
            lead_honors,
            k,
            0,
            budget,
            scratch,
        )
        k = k + 1 if k < 2 else 1 << 30
    return result


@njit(cache=True)
def _search_round(
    fs: np.ndarray,
    trick: np.ndarray,
    count: np.ndarray,
    forbid: np.ndarray,
    known: np.ndarray,
    opts: np.ndarray,
    nopt: np.ndarray,
    idx: np.ndarray,
    disc: np.ndarray,
    active: np.ndarray,
    nactive: int,
    p: np.ndarray,
    n: int,
    me: int,
    gone: int,
    trump: int,
    h: int,
    need: int,
    must_trump: bool,
    lead_honors: bool,
    max_disc: int,
    policy: int,
    budget: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """One round of the search from frame 0. Returns 1 found, 0 exhausted, 2 cut by ``max_disc``, 3 out of budget."""
    d = 0
    cut = False
    entering = True
    while True:
        if entering:
            entering = False
            budget[0] -= 1
            if budget[0] <= 0:
                return 3
            # a completed trick resolves without a choice
            if fs[d, 4] == nactive:
                winner = trick_winner(trick[d], fs[d, 3], n, trump)
                if winner == me:
                    fs[d, 2] += 1
                if fs[d, 2] >= need:
                    d -= 1
                    if d < 0:
                        return 2 if cut else 0
                    continue
                if fs[d, 7] + 1 == h:
                    return 1
                trick[d, :] = -1
                fs[d, 3] = winner
                fs[d, 4] = 0
                fs[d, 5] = winner
                fs[d, 6] = -1
                fs[d, 7] += 1
            # Early success: even winning every trick left cannot reach ``need``, and the opponents' hands
            # can still be completed from the cards each may hold (then every completion can be played out).
            if fs[d, 2] + popcount(fs[d, 0]) + (1 if trick[d, me] >= 0 else 0) < need and _hands_completable(
                fs[d, 1], count[d], forbid[d], known[d], n, me
            ):
                return 1
            # sound prune: the tricks we are sure of already reach ``need`` against every card still unseen
            # (``sure_tricks`` counts at most our trumps and our card in this trick: skipped when those cannot)
            others = fs[d, 1]
            for q in range(n):
                others |= known[d, q]
            in_trick = 1 if trick[d, me] >= 0 else 0
            mine = fs[d, 2]
            if (
                mine + popcount(fs[d, 0] & suit_mask(trump)) + in_trick >= need
                and mine + sure_tricks(fs[d, 0], trick[d], fs[d, 3], n, me, fs[d, 6], trump, others) >= need
            ) or (
                fs[d, 4] == 0
                and fs[d, 5] == me
                and fs[d, 2] + popcount(fs[d, 0]) >= need
                and _all_sure_leads(fs[d, 0], others, trump)
            ):
                d -= 1
                if d < 0:
                    return 2 if cut else 0
                continue
            nopt[d] = _options(
                p,
                n,
                me,
                fs[d],
                trick[d],
                count[d],
                forbid[d],
                known[d],
                gone,
                trump,
                must_trump,
                lead_honors,
                policy,
                d,
                opts[d],
                scratch,
            )
            idx[d] = 0
        if idx[d] == nopt[d]:
            d -= 1
            if d < 0:
                return 2 if cut else 0
            continue
        c = opts[d, idx[d]]
        child_disc = disc[d] + (1 if idx[d] > 0 else 0)
        idx[d] += 1
        if child_disc > max_disc:
            cut = True
            idx[d] = nopt[d]  # later options only deviate more
            continue
        seat = fs[d, 5]
        leading = fs[d, 4] == 0
        led = c // 13 if leading else fs[d, 6]
        for k in range(8):  # the child's frame starts as a copy (element by element: no views)
            fs[d + 1, k] = fs[d, k]
        for k in range(MAX_PLAYERS):
            trick[d + 1, k] = trick[d, k]
            count[d + 1, k] = count[d, k]
            forbid[d + 1, k] = forbid[d, k]
            known[d + 1, k] = known[d, k]
        if seat == me:
            fs[d + 1, 0] = fs[d, 0] & ~_bit(c)
        else:
            best_led, best_trump = _bests(trick[d], n, fs[d, 6], trump)
            extra = forbidden_after(c, leading, fs[d, 6], best_led, best_trump, trump, must_trump, lead_honors)
            kn = known[d, seat]
            if (kn & ~_bit(c)) & extra:
                continue
            free_after = count[d, seat] - popcount(kn) - (0 if (kn >> c) & 1 else 1)
            new_pool = fs[d, 1] & ~_bit(c)
            new_forbid = forbid[d, seat] | extra
            if popcount(new_pool & ~new_forbid) < free_after:
                continue
            fs[d + 1, 1] = new_pool
            forbid[d + 1, seat] = new_forbid
            known[d + 1, seat] = kn & ~_bit(c)
            count[d + 1, seat] -= 1
        trick[d + 1, seat] = c
        fs[d + 1, 4] += 1
        fs[d + 1, 5] = next_active_arr(active, n, seat)
        fs[d + 1, 6] = led
        disc[d + 1] = child_disc
        d += 1
        entering = True
