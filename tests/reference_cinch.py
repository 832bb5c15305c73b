"""The exact cinch check as it stood before the speed work (commit 3906877), kept as a reference.

``tests/test_cinch_speed.py`` holds ``core.has_cinch`` to ``reference_has_cinch`` on many positions:
the fast path of the core must give the same answer as this search on every position. Everything
below the imports is the cinch section of ``bourre_env/core.py`` at that commit, unchanged, except
the entry point ``reference_has_cinch`` at the end (uncached, so that it never reads the core's cache; the
memoising ``has_cinch`` it replaces is dropped), the search statistics, counted in a scratch array ``x`` as the
core's are (``layout.X_CINCH_*``) rather than in the state,
and the root of the search, brought to the cinch's present definition (deliberately, with the core):
a passed dealer's turned card that a reshuffle put back into the stock is unseen (``S_FACE_RESHUFFLED``),
and each opponent starts with the cards its earlier plays prove it does not hold (``core.proven_absent``)
forbidden, in the bound of ``sure_tricks`` as in the search; and ``sure_tricks`` itself, which counts our winning
trump in the trick under way among the trumps matched against the higher unseen ones (it counted it only when no
unseen trump was higher), with the core's, so that the two still do the same work.

Its search keeps the budget of ``P_CINCH_BUDGET`` (100,000 nodes) and its rounds of limited discrepancy, which the
core replaced with an exhaustive search (``cinch_search``): where the single paths decide, the two do the same work;
where they do not, the answers agree whenever the reference settles the question within its budget.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core import (
    CINCH_TRICKS,
    FACE_DEAD,
    FACE_IN_HAND,
    MAX_PLAYERS,
    NUM_CARDS,
    NUM_PROBE_POLICIES,
    P_CINCH_BUDGET,
    P_DECK_MASK,
    P_HAND_SIZE,
    P_LEAD_HONORS,
    P_MUST_TRUMP,
    PASSED,
    PLAY,
    PLAYING,
    S_CUR,
    S_DEALER,
    S_DECISION,
    S_FACE_RESHUFFLED,
    S_FACE_STATE,
    S_HAND,
    S_KNOWN_OUT,
    S_LEADER,
    S_LED,
    S_NACTIVE,
    S_NPLAYED,
    S_PHASE,
    S_PLAYED,
    S_TRICK_CARDS,
    S_TRICK_NO,
    S_TRICKS,
    S_TRUMP,
    X_CINCH_ABORTS,
    X_CINCH_NODES,
    X_CINCH_SEARCHES,
    above_mask,
    face_bit,
    highest_card,
    honors_mask,
    lowest_card,
    ordinary_legal,
    popcount,
    proven_absent,
    suit_mask,
    trick_winner,
)
from bourre_env.core.bits import _bit, _n


@njit(cache=True)
def unseen_cards(s: np.ndarray, p: np.ndarray, seat: int) -> int:
    """Cards of the deck whose place ``seat`` does not know (opponents' hands, stock, passed hands, discards)."""
    known = s[S_HAND + seat] | s[S_PLAYED] | s[S_KNOWN_OUT + seat]
    if s[S_FACE_RESHUFFLED] == 0:
        known |= face_bit(s)
    return p[P_DECK_MASK] & ~known


@njit(cache=True)
def trump_lower_bound(hand: int, trump: int, killers: int) -> int:
    """Tricks the hand's trumps win whatever happens: each killer (higher trump) can beat at most one of them.

    The sets of killers above each of our trumps are nested, so a greedy matching from the top is maximum.
    """
    trumps = hand & suit_mask(trump)
    m = 0
    beaten = 0
    while trumps:
        c = highest_card(trumps)
        trumps &= ~_bit(c)
        m += 1
        if popcount(killers & above_mask(c)) > beaten:
            beaten += 1
    return m - beaten


@njit(cache=True)
def _cinch_uncached(s: np.ndarray, p: np.ndarray, seat: int, x: np.ndarray) -> bool:
    won = s[S_TRICKS + seat]
    need = CINCH_TRICKS - won
    if need <= 0:
        return True
    n = _n(p)
    hand = s[S_HAND + seat]
    t = s[S_TRICK_NO]
    row = S_TRICK_CARDS + t * MAX_PLAYERS
    played_now = s[row + seat] >= 0
    if popcount(hand) + (1 if played_now else 0) < need:
        return False
    trump = s[S_TRUMP]
    pool = unseen_cards(s, p, seat)
    absent = np.empty(MAX_PLAYERS, dtype=np.int64)
    proven_absent(s, p, absent)
    others = np.int64(0)
    for q in range(n):
        if q != seat and s[S_DECISION + q] == PLAYING:
            others |= pool & ~absent[q]
    if _face_held_by_other(s, seat):
        others |= face_bit(s)
    if sure_tricks(hand, s[row : row + MAX_PLAYERS], s[S_LEADER], n, seat, s[S_LED], trump, others) >= need:
        return True
    return not _cinch_search(s, p, seat, pool, need, x)


@njit(cache=True)
def _face_held_by_other(s: np.ndarray, seat: int) -> bool:
    """The turned card is known to be in another playing seat's hand (a passed dealer laid it down)."""
    dealer = s[S_DEALER]
    return s[S_FACE_STATE] == FACE_IN_HAND and dealer != seat and s[S_DECISION + dealer] == PLAYING


@njit(cache=True)
def sure_tricks(hand: int, trick: np.ndarray, leader: int, n: int, me: int, led: int, trump: int, others: int) -> int:
    """A lower bound on the tricks ``me`` takes from now on, whatever the others hold (within ``others``).

    Our trumps are matched against the higher trumps that could beat them; a trick under way adds
    its best trump as one more possible killer of the card we have yet to play to it. When we already
    played to it and our card is winning it: a trump joins the matching; a card of another suit counts if
    nothing the others may hold beats it.
    """
    mine = trick[me]
    best_trump = -1
    for q in range(n):
        c = trick[q]
        if c >= 0 and c // 13 == trump and c > best_trump:
            best_trump = c
    if mine < 0:
        killers = others | (_bit(best_trump) if best_trump >= 0 else np.int64(0))
        return trump_lower_bound(hand, trump, killers)
    if trick_winner(trick, leader, n, trump) != me:
        return trump_lower_bound(hand, trump, others)
    if mine // 13 == trump:
        return trump_lower_bound(hand | _bit(mine), trump, others)
    safe = (others & suit_mask(trump)) == 0 and (others & above_mask(mine)) == 0
    return trump_lower_bound(hand, trump, others) + (1 if safe else 0)


@njit(cache=True)
def _cinch_search(s: np.ndarray, p: np.ndarray, me: int, pool: int, need: int, x: np.ndarray) -> bool:
    """True if some consistent placement and legal continuation leaves ``me`` with fewer than ``need`` more tricks.

    Depth-first over every play from now to the end of the deal. ``me``'s cards are known; an
    opponent's hand is the cards it will play, so each opponent card is drawn from the unseen pool
    when played, and everything its play proves it did not hold (a void, no higher card of the
    suit, no trump) is forbidden for its later plays. A branch that reaches the end of the deal is
    therefore a complete, consistent deal. Iterative with an explicit stack (numba cannot cache
    recursive functions).
    """
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
    proven_absent(s, p, forbid[0])
    forbid[0, me] = 0
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
    gone = s[S_PLAYED] | ~p[P_DECK_MASK] | s[S_KNOWN_OUT + me]
    if s[S_FACE_STATE] == FACE_DEAD or (
        s[S_FACE_STATE] == FACE_IN_HAND and s[S_DECISION + s[S_DEALER]] == PASSED and s[S_FACE_RESHUFFLED] == 0
    ):
        gone |= face_bit(s)
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
    budget = np.zeros(1, dtype=np.int64)
    budget[0] = p[P_CINCH_BUDGET]
    # Limited discrepancy search: the move ordering is usually right, so first try the paths that
    # leave it at most ``k`` times, then ``k + 1``... A round that cut no branch was exhaustive.
    # After the first single path, a few more under other orderings: a counterexample is usually
    # plentiful, and one ordering's blind spot (e.g. every opponent spending a trump on our ace) is
    # rarely another's.
    result = 2
    for policy in range(NUM_PROBE_POLICIES):
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
            0,
            policy,
            budget,
            scratch,
        )
        if result != 2:
            break
    # Two more rounds of growing discrepancy, then one exhaustive round: a cinch can only be proven
    # by exhausting the tree, and each further round would re-explore all the previous ones.
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
    x[X_CINCH_SEARCHES] += 1
    x[X_CINCH_NODES] += p[P_CINCH_BUDGET] - budget[0]
    if result == 3:
        # Out of budget: no proof either way. Report a counterexample, i.e. no cinch, so that an
        # unproven cinch never forces a player's hand (documented in the README; counted for tests).
        x[X_CINCH_ABORTS] += 1
        return True
    return result == 1


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
            others = fs[d, 1]
            for q in range(n):
                others |= known[d, q]
            if fs[d, 2] + sure_tricks(fs[d, 0], trick[d], fs[d, 3], n, me, fs[d, 6], trump, others) >= need or (
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
        fs[d + 1, :] = fs[d, :]
        trick[d + 1, :] = trick[d, :]
        count[d + 1, :] = count[d, :]
        forbid[d + 1, :] = forbid[d, :]
        known[d + 1, :] = known[d, :]
        if seat == me:
            fs[d + 1, 0] = fs[d, 0] & ~_bit(c)
        else:
            best_led, best_trump = _bests(trick[d], n, fs[d, 6], trump)
            extra = _forbidden_after(c, leading, fs[d, 6], best_led, best_trump, trump, must_trump, lead_honors)
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


@njit(cache=True)
def _hands_completable(pool: int, count: np.ndarray, forbid: np.ndarray, known: np.ndarray, n: int, me: int) -> bool:
    """Hall's condition: every set of opponents can fill its free slots from the unseen cards it may hold."""
    seats = np.empty(MAX_PLAYERS, dtype=np.int64)
    k = 0
    for q in range(n):
        if q != me and count[q] - popcount(known[q]) > 0:
            seats[k] = q
            k += 1
    for subset in range(1, 1 << k):
        union = np.int64(0)
        slots = 0
        for i in range(k):
            if (subset >> i) & 1:
                q = seats[i]
                union |= pool & ~forbid[q]
                slots += count[q] - popcount(known[q])
        if popcount(union) < slots:
            return False
    return True


@njit(cache=True)
def _all_sure_leads(hand: int, others: int, trump: int) -> bool:
    """Every card of ``hand`` wins when led against the cards ``others`` may hold; on lead, we then keep it."""
    trumps_out = (others & suit_mask(trump)) != 0
    x = hand
    while x:
        c = lowest_card(x)
        x &= x - 1
        if others & above_mask(c):
            return False
        if c // 13 != trump and trumps_out:
            return False
    return True


@njit(cache=True)
def _bests(trick: np.ndarray, n: int, led: int, trump: int) -> tuple[int, int]:
    best_led = -1
    best_trump = -1
    for q in range(n):
        c = trick[q]
        if c >= 0:
            if c // 13 == led and c > best_led:
                best_led = c
            if c // 13 == trump and c > best_trump:
                best_trump = c
    return best_led, best_trump


@njit(cache=True)
def _options(
    p: np.ndarray,
    n: int,
    me: int,
    fs: np.ndarray,
    trick: np.ndarray,
    count: np.ndarray,
    forbid: np.ndarray,
    known: np.ndarray,
    gone: int,
    trump: int,
    must_trump: bool,
    lead_honors: bool,
    policy: int,
    depth: int,
    out: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """The plays to try at a search node, most promising for the adversary first; returns how many.

    ``policy`` 0 is the main ordering; 1 lets opponents that cannot take the trick go void rather than
    spend a useful card; 2 and up shuffle the order with a hash of the policy, depth and card.
    """
    seat = fs[5]
    leading = fs[4] == 0
    led = fs[6]
    best_led, best_trump = _bests(trick, n, led, trump)
    if seat == me:
        hand = fs[0]
        if leading:
            options = hand
            if lead_honors and (hand & honors_mask(trump)):
                options = hand & honors_mask(trump)
        else:
            options = ordinary_legal(hand, led, best_led, best_trump, trump, must_trump)
        k = 0
        keys = scratch[0]
        while options:
            c = lowest_card(options)
            options &= options - 1
            out[k] = c
            # Our strongest cards first, while the opponents still hold every card that could beat them.
            keys[k] = -_strength(c, trump)
            k += 1
    else:
        kn = known[seat]
        free = count[seat] - popcount(kn)
        allowed = fs[1] & ~forbid[seat] if free > 0 else np.int64(0)
        cand = kn | _run_representatives(allowed, fs[1] | gone | kn, fs[0])
        my_card = trick[me]
        mine_winning = False
        if my_card >= 0 and not leading:
            mine_winning = trick_winner(trick, fs[3], n, trump) == me
        k = 0
        keys = scratch[0]
        while cand:
            c = lowest_card(cand)
            cand &= cand - 1
            out[k] = c
            extra = _forbidden_after(c, leading, led, best_led, best_trump, trump, must_trump, lead_honors)
            # Fewest new constraints first. Before our card, play high (we may have to play under it);
            # after it, beat it as cheaply as possible, or else play low and keep the high cards.
            beats = leading or _beats(c, led, best_led, best_trump, trump)
            key = 64 * popcount(extra & fs[1]) if policy != 1 or beats else 0
            if my_card < 0 and beats:
                key -= _strength(c, trump)
            else:
                key += _strength(c, trump)
                if mine_winning and beats:
                    key -= 100000
            if policy >= 2:
                key = _mix(policy * 1000003 + depth * 101 + c) % 4096
                if mine_winning and beats:
                    key -= 100000
            keys[k] = key
            k += 1
    # stable insertion sort by key: lists are short
    for i in range(1, k):
        key = keys[i]
        c = out[i]
        j = i - 1
        while j >= 0 and keys[j] > key:
            keys[j + 1] = keys[j]
            out[j + 1] = out[j]
            j -= 1
        keys[j + 1] = key
        out[j + 1] = c
    return k


@njit(cache=True)
def _mix(x: int) -> int:
    """A cheap deterministic integer hash (for the shuffled probe orderings)."""
    z = np.uint64(x) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)
    return np.int64((z ^ (z >> np.uint64(32))) >> np.uint64(1))


@njit(cache=True)
def _beats(c: int, led: int, best_led: int, best_trump: int, trump: int) -> bool:
    """Whether ``c`` would become the winning card of a trick with these best cards."""
    if c // 13 == trump:
        return c > best_trump
    return best_trump < 0 and c // 13 == led and c > best_led


@njit(cache=True)
def _forbidden_after(
    card: int, leading: bool, led: int, best_led: int, best_trump: int, trump: int, must_trump: bool, lead_honors: bool
) -> int:
    """Cards a player cannot hold if playing ``card`` was legal (the cards that would have been required instead)."""
    csuit = card // 13
    tmask = suit_mask(trump)
    if leading:
        if lead_honors and not (honors_mask(trump) >> card) & 1:
            return honors_mask(trump)
        return 0
    lmask = suit_mask(led)
    if csuit == led:
        if led == trump or best_trump < 0:
            beat = lmask & above_mask(best_led)
            if (beat >> card) & 1:
                return 0
            return beat
        return 0
    over = tmask & above_mask(best_trump) if best_trump >= 0 else tmask
    if csuit == trump:
        if (over >> card) & 1:
            return lmask
        return lmask | over
    if must_trump:
        return lmask | tmask
    return lmask | over


@njit(cache=True)
def next_active_arr(active: np.ndarray, n: int, seat: int) -> int:
    for k in range(1, n + 1):
        q = (seat + k) % n
        if active[q]:
            return q
    return -1


@njit(cache=True)
def _run_representatives(allowed: int, passable: int, my_hand: int) -> int:
    """The highest and lowest card of each run of ``allowed`` cards in a suit.

    Cards of one run have no card between them that anyone still holds apart from pool cards this player
    may draw, so they compare alike with every card that matters; their order among themselves only
    decides which of two unseen cards wins, and the two ends of the run cover both outcomes.
    ``passable`` holds the cards that may lie between run members (the allowed pool and cards gone from play).
    """
    out = np.int64(0)
    for suit in range(4):
        hi = -1
        lo = -1
        for r in range(12, -1, -1):
            c = 13 * suit + r
            if (allowed >> c) & 1:
                if hi < 0:
                    hi = c
                lo = c
            elif (passable >> c) & 1 and not (my_hand >> c) & 1:
                continue
            else:
                if hi >= 0:
                    out |= _bit(hi) | _bit(lo)
                hi = -1
                lo = -1
        if hi >= 0:
            out |= _bit(hi) | _bit(lo)
    return out


@njit(cache=True)
def _strength(c: int, trump: int) -> int:
    return (100 if c // 13 == trump else 0) + c % 13


@njit(cache=True)
def reference_has_cinch(s: np.ndarray, p: np.ndarray, seat: int, x: np.ndarray) -> bool:
    """``has_cinch`` before the speed work, without its cache (it counts its searches in the scratch ``x``)."""
    if s[S_PHASE] != PLAY or s[S_DECISION + seat] != PLAYING:
        return False
    return _cinch_uncached(s, p, seat, x)


@njit(cache=True)
def reference_first_round(s: np.ndarray, p: np.ndarray, me: int, need: int, policy: int, budget: np.ndarray) -> int:
    """One zero-discrepancy round of ``_cinch_search`` under ``policy``, from its start, spending ``budget[0]``.

    Returns ``_search_round``'s code: 1 found, 0 exhausted, 2 cut, 3 out of budget. The setup is
    ``_cinch_search``'s, line for line.
    """
    pool = unseen_cards(s, p, me)
    n = _n(p)
    depth_max = (p[P_HAND_SIZE] - s[S_TRICK_NO]) * s[S_NACTIVE] + 2
    fs = np.empty((depth_max, 8), dtype=np.int64)
    trick = np.empty((depth_max, MAX_PLAYERS), dtype=np.int64)
    count = np.empty((depth_max, MAX_PLAYERS), dtype=np.int64)
    forbid = np.empty((depth_max, MAX_PLAYERS), dtype=np.int64)
    known = np.empty((depth_max, MAX_PLAYERS), dtype=np.int64)
    opts = np.empty((depth_max, NUM_CARDS), dtype=np.int64)
    nopt = np.empty(depth_max, dtype=np.int64)
    idx = np.empty(depth_max, dtype=np.int64)
    disc = np.empty(depth_max, dtype=np.int64)
    active = np.zeros(MAX_PLAYERS, dtype=np.int64)
    scratch = np.empty((2, NUM_CARDS), dtype=np.int64)
    trick[0, :] = -1
    count[0, :] = 0
    proven_absent(s, p, forbid[0])
    forbid[0, me] = 0
    known[0, :] = 0
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
    gone = s[S_PLAYED] | ~p[P_DECK_MASK] | s[S_KNOWN_OUT + me]
    if s[S_FACE_STATE] == FACE_DEAD or (
        s[S_FACE_STATE] == FACE_IN_HAND and s[S_DECISION + s[S_DEALER]] == PASSED and s[S_FACE_RESHUFFLED] == 0
    ):
        gone |= face_bit(s)
    fs[0, 0] = s[S_HAND + me]
    fs[0, 1] = pool
    fs[0, 2] = 0
    fs[0, 3] = s[S_LEADER]
    fs[0, 4] = s[S_NPLAYED]
    fs[0, 5] = s[S_CUR]
    fs[0, 6] = s[S_LED]
    fs[0, 7] = t0
    return _search_round(
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
        s[S_TRUMP],
        p[P_HAND_SIZE],
        need,
        p[P_MUST_TRUMP] == 1,
        p[P_LEAD_HONORS] == 1,
        0,
        policy,
        budget,
        scratch,
    )
