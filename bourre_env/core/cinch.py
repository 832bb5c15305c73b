"""The cinch (docs/rules.md): whether a seat is certain to take three tricks, worked out exactly.

``has_cinch`` is the one entry point; cheap bounds settle almost every position and an exact search
settles the rest. The rules of trick play it ranges over are ``bourre_env.core.tricks``'s.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import (
    ACE,
    ALL_CARDS,
    QUEEN,
    _bit,
    _n,
    above_mask,
    face_bit,
    highest_card,
    lowest_card,
    next_active,
    popcount,
    suit_mask,
)
from bourre_env.core.cards import (
    NUM_CARDS,
)
from bourre_env.core.layout import (
    FACE_DEAD,
    FACE_IN_HAND,
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
    S_MOVES,
    S_NACTIVE,
    S_NPLAYED,
    S_PHASE,
    S_PLAYED,
    S_TRICK_CARDS,
    S_TRICK_NO,
    S_TRICKS,
    S_TRUMP,
    SCRATCH_SIZE,
    X_CINCH_ABORTS,
    X_CINCH_HAND,
    X_CINCH_KEY,
    X_CINCH_NODES,
    X_CINCH_PLAYED,
    X_CINCH_SEARCHES,
    X_CINCH_VAL,
)
from bourre_env.core.rules import (
    CINCH_TRICKS,
    MAX_PLAYERS,
    P_CINCH_BUDGET,
    P_DECK_MASK,
    P_HAND_SIZE,
    P_LEAD_HONORS,
    P_MUST_TRUMP,
)
from bourre_env.core.tricks import (
    _beats,
    _bests,
    forbidden_after,
    honors_mask,
    ordinary_plays,
    proven_absent,
    trick_winner,
)

_NOT_TOP_RANK = ALL_CARDS & ~sum(1 << (13 * suit + 12) for suit in range(4))  # every card but the aces
_NOT_BOTTOM_RANK = ALL_CARDS & ~sum(1 << (13 * suit) for suit in range(4))  # every card but the twos
NUM_PROBE_POLICIES = 8  # orderings tried as single-path probes before the exhaustive cinch search


@njit(cache=True)
def unseen_cards(s: np.ndarray, p: np.ndarray, seat: int) -> int:
    """Cards of the deck whose place ``seat`` does not know (opponents' hands, stock, passed hands, discards).

    The turned card is seen (in the dealer's hand, dead, played, or laid down with a passed dealer's hand)
    until a reshuffle puts a passed dealer's turned card back into the stock.
    """
    known = s[S_HAND + seat] | s[S_PLAYED] | s[S_KNOWN_OUT + seat]
    if s[S_FACE_RESHUFFLED] == 0:
        known |= face_bit(s)
    return int(p[P_DECK_MASK] & ~known)


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
def has_cinch(s: np.ndarray, p: np.ndarray, seat: int) -> bool:
    """``has_cinch_with`` with a fresh scratch array (nothing is remembered between calls)."""
    return has_cinch_with(s, p, seat, np.zeros(SCRATCH_SIZE, dtype=np.int64))


@njit(cache=True)
def has_cinch_with(s: np.ndarray, p: np.ndarray, seat: int, x: np.ndarray) -> bool:
    """The cinch (docs/rules.md): tricks won plus tricks certain to be won from now on is at least 3.

    Certain means: in every placement of the cards ``seat`` has not seen (among the other playing
    seats, respecting their hand sizes and the dealer's kept face-up card, or out of play) that is
    consistent with what the opponents' earlier plays prove (``proven_absent``), and every
    continuation that the ordinary rules of trick play allow to anyone, ``seat`` included. A card
    a reshuffle may have put back into play is unseen (``unseen_cards``). Cheap
    bounds settle almost every position; the rest is an exact search for a continuation in which
    ``seat`` ends with fewer tricks (``_cinch_search``).

    The answer is memoised in the scratch array ``x`` (``layout.X_CINCH_*``), with the search statistics; the
    state is only read.
    """
    if s[S_PHASE] != PLAY or s[S_DECISION + seat] != PLAYING:
        return False
    key = s[S_MOVES] * MAX_PLAYERS + seat + 1
    hand = s[S_HAND + seat]
    if x[X_CINCH_KEY] == key and x[X_CINCH_HAND] == hand and x[X_CINCH_PLAYED] == s[S_PLAYED]:
        return bool(x[X_CINCH_VAL] == 1)
    answer = _cinch_uncached(s, p, seat, x)
    x[X_CINCH_KEY] = key
    x[X_CINCH_HAND] = hand
    x[X_CINCH_PLAYED] = s[S_PLAYED]
    x[X_CINCH_VAL] = 1 if answer else 0
    return answer


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
    face_held = face_bit(s) if _face_held_by_other(s, seat) else np.int64(0)
    trick = s[row : row + MAX_PLAYERS]
    # The bound against every unseen card settles most positions; only if it fails is it worth working out what
    # the earlier plays prove (fewer cards the opponents may hold can only add sure tricks).
    if sure_tricks(hand, trick, s[S_LEADER], n, seat, s[S_LED], trump, pool | face_held) >= need:
        return True
    # one allocation: the single paths' scratch (rows 0-4, see ``_probe``), the node budget (row 5) and
    # the cards each seat's earlier plays prove it does not hold (row 6)
    w = np.empty((7, MAX_PLAYERS), dtype=np.int64)
    absent = w[6]
    proven_absent(s, p, absent)
    others = face_held  # the unseen cards that some opponent may hold
    for q in range(n):
        if q != seat and s[S_DECISION + q] == PLAYING:
            others |= pool & ~absent[q]
    if others != pool | face_held and sure_tricks(hand, trick, s[S_LEADER], n, seat, s[S_LED], trump, others) >= need:
        return True
    return not _cinch_search(s, p, seat, pool, need, w, x)


@njit(cache=True)
def _face_held_by_other(s: np.ndarray, seat: int) -> bool:
    """The turned card is known to be in another playing seat's hand (a passed dealer laid it down)."""
    dealer = s[S_DEALER]
    return bool(s[S_FACE_STATE] == FACE_IN_HAND and dealer != seat and s[S_DECISION + dealer] == PLAYING)


@njit(cache=True)
def sure_tricks(hand: int, trick: np.ndarray, leader: int, n: int, me: int, led: int, trump: int, others: int) -> int:
    """A lower bound on the tricks ``me`` takes from now on, whatever the others hold (within ``others``).

    Our trumps are matched against the higher trumps that could beat them; a trick under way adds
    its best trump as one more possible killer of the card we have yet to play to it, or, when we
    already played to it, our card counts if it is winning and nothing the others may hold beats it.
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
    bound = trump_lower_bound(hand, trump, others)
    if trick_winner(trick, leader, n, trump) == me:
        tmask = suit_mask(trump)
        if mine // 13 == trump:
            safe = (others & tmask & above_mask(mine)) == 0
        else:
            safe = (others & tmask) == 0 and (others & above_mask(mine)) == 0
        if safe:
            bound += 1
    return bound


# ---------------------------------------------------------------- single-path rounds
# ``_cinch_search`` first runs ``NUM_PROBE_POLICIES`` rounds without discrepancy, one path each, and
# nearly always stops in the first: a counterexample lies on the path its move ordering takes first
# (about 98% of searches at 5 players, 93% at 7). The generic machinery of ``_search_round`` (a frame
# per play, full option lists sorted at each node) made these paths cost most of the time of a random
# decision, so ``_probe`` walks the same path in place: the same node tests in the same order, the
# play the sorted option list would put first, the same consistency checks. Such a round enters only
# the nodes of its path: after the first child of a node fails, the next option would be one
# discrepancy, so it is cut if there is one, and the round backtracks without entering another node.
# So its outcome (found, exhausted where no node on the path had a second option, else cut) and the
# budget it spends (one per node entered) follow from the path alone, and ``_probe`` returns both
# exactly as ``_search_round(max_disc=0, policy)`` would. ``tests/test_cinch_speed.py`` holds both to
# the search as it was, round by round, on every searched position of its sweeps.


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


@njit(cache=True)
def _strongest(options: int, trump: int) -> int:
    """The play ``_options`` sorts first for ``me``: greatest ``_strength``, the lowest card id among equals."""
    trumps = options & suit_mask(trump)
    if trumps:
        return highest_card(trumps)
    best = -1
    for suit in range(4):
        x = options & suit_mask(suit)
        if x:
            c = highest_card(x)
            if best < 0 or c % 13 > best % 13:
                best = c
    return best


@njit(cache=True)
def _first_option(
    cand: int,
    pool: int,
    mine_played: bool,
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
) -> int:
    """The opponent's play ``_options`` sorts first (least key, the lowest card id among equals); -1 if none.

    The keys are ``_options``'s. Policies 0 and 1 key a card by the constraints its play adds and
    its beating the trick, both the same for every card of one suit on one side of a cut (the card
    to beat, or the trump honours on a lead), plus or minus its strength: so the least key of such
    a part is at its highest or its lowest card, and only those two need a key (``_part_champion``).
    Two cases need fewer: a lead beats and, but for honours still unseen under ``lead_honors``, adds
    no constraint that counts, so every key is minus the strength; and when following, policy 0
    keys any card off the suit led at least 64 per unseen card of that suit it proves absent, less
    the greatest strength (and 100000 where ours is winning), so those suits are skipped when the
    suit led already gave a smaller key. The shuffled policies key every card.
    """
    best = -1
    best_key = 0
    if policy >= 2:
        while cand:
            c = lowest_card(cand)
            cand &= cand - 1
            key = _option_key(
                c,
                pool,
                mine_played,
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
            if best < 0 or key < best_key:
                best = c
                best_key = key
        return best
    if leading and (not lead_honors or (pool & honors_mask(trump)) == 0):
        return _strongest(cand, trump) if cand else -1
    for i in range(4):
        suit = i if leading else (led + i) % 4  # when following, the suit led first
        if i == 1 and not leading and policy == 0 and best >= 0:
            # the least key a card off the suit led can have
            floor = 64 * popcount(pool & suit_mask(led)) - _strength(13 * trump + ACE, trump)
            if mine_winning:
                floor -= 100000
            if best_key < floor:
                return best
        x = cand & suit_mask(suit)
        if x == 0:
            continue
        split = -1  # the card above which this suit's extra constraints and beating may change
        if leading:
            if suit == trump:
                split = 13 * trump + QUEEN - 1  # above it: the honours (Q, K, A)
        elif suit == led and (led == trump or best_trump < 0):
            split = best_led
        elif suit == trump:
            split = best_trump
        hi = x & above_mask(split) if split >= 0 else x
        for part in (hi, x & ~hi):
            if part == 0:
                continue
            c = _part_champion(part, mine_played, leading, led, best_led, best_trump, trump)
            key = _option_key(
                c,
                pool,
                mine_played,
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
            if best < 0 or key < best_key or (key == best_key and c < best):
                best = c
                best_key = key
    return best


@njit(cache=True)
def _part_champion(
    part: int, mine_played: bool, leading: bool, led: int, best_led: int, best_trump: int, trump: int
) -> int:
    """The card of ``part`` (one suit, cards alike in constraints and in beating) with the least key under
    policies 0 and 1: the strongest where the key subtracts strength (a card that beats, before ours), else
    the weakest."""
    c = lowest_card(part)
    if not mine_played and (leading or _beats(c, led, best_led, best_trump, trump)):
        return highest_card(part)
    return c


@njit(cache=True)
def _option_key(
    c: int,
    pool: int,
    mine_played: bool,
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
) -> int:
    """The search's sort key of an opponent's play ``c`` (the least is tried first)."""
    extra = forbidden_after(c, leading, led, best_led, best_trump, trump, must_trump, lead_honors)
    # Fewest new constraints first. Before our card, play high (we may have to play under it);
    # after it, beat it as cheaply as possible, or else play low and keep the high cards.
    beats = leading or _beats(c, led, best_led, best_trump, trump)
    key = 64 * popcount(extra & pool) if policy != 1 or beats else 0
    if not mine_played and beats:
        key -= _strength(c, trump)
    else:
        key += _strength(c, trump)
        if mine_winning and beats:
            key -= 100000
    if policy >= 2:
        key = _mix(policy * 1000003 + depth * 101 + c) % 4096
        if mine_winning and beats:
            key -= 100000
    return key


@njit(cache=True)
def _gone_for(s: np.ndarray, p: np.ndarray, me: int) -> int:
    """Cards ``me`` knows are out of every hand: played, absent from the deck, own known discards, a dead face card,
    a passed dealer's turned card that no reshuffle has put back into the stock."""
    gone = s[S_PLAYED] | ~p[P_DECK_MASK] | s[S_KNOWN_OUT + me]
    if s[S_FACE_STATE] == FACE_DEAD or (
        s[S_FACE_STATE] == FACE_IN_HAND and s[S_DECISION + s[S_DEALER]] == PASSED and s[S_FACE_RESHUFFLED] == 0
    ):
        gone |= face_bit(s)
    return int(gone)


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


@njit(cache=True)
def _hands_completable(pool: int, count: np.ndarray, forbid: np.ndarray, known: np.ndarray, n: int, me: int) -> bool:
    """Hall's condition: every set of opponents can fill its free slots from the unseen cards it may hold."""
    seats = 0  # the opponents with free slots
    total = 0
    narrowest = NUM_CARDS
    for q in range(n):
        free = count[q] - popcount(known[q])
        if q != me and free > 0:
            seats |= 1 << q
            total += free
            narrowest = min(narrowest, popcount(pool & ~forbid[q]))
    # Shortcuts that return True only with a proof that the condition holds: every set's union holds
    # at least any one member's cards, so if even the fewest cards an opponent may hold cover all the
    # free slots together, no set can fail; and a completion found greedily proves it (Hall's theorem:
    # the condition is necessary for a completion). Otherwise every set is checked.
    if narrowest >= total or _greedy_completion(pool, count, forbid, known, seats, n):
        return True
    subset = seats
    while subset:  # every non-empty subset of ``seats``
        union = np.int64(0)
        slots = 0
        for q in range(n):
            if (subset >> q) & 1:
                union |= pool & ~forbid[q]
                slots += count[q] - popcount(known[q])
        if popcount(union) < slots:
            return False
        subset = (subset - 1) & seats
    return True


@njit(cache=True)
def _greedy_completion(pool: int, count: np.ndarray, forbid: np.ndarray, known: np.ndarray, seats: int, n: int) -> bool:
    """True if dealing the free slots of ``seats`` in seat order succeeds, each seat taking first the cards that
    no later seat may hold (a sufficient test for ``_hands_completable``; False proves nothing)."""
    used = np.int64(0)
    for q in range(n):
        if not (seats >> q) & 1:
            continue
        avail = pool & ~forbid[q] & ~used
        free = count[q] - popcount(known[q])
        if popcount(avail) < free:
            return False
        later = np.int64(0)
        for r in range(q + 1, n):
            if (seats >> r) & 1:
                later |= pool & ~forbid[r]
        take = _lowest_cards(avail & ~later, free)
        used |= take | _lowest_cards(avail & ~take, free - popcount(take))
    return True


@njit(cache=True)
def _lowest_cards(mask: int, k: int) -> int:
    """The ``k`` lowest cards of ``mask`` (all of them if it holds fewer)."""
    out = np.int64(0)
    for _ in range(k):
        if mask == 0:
            break
        low = mask & -mask
        out |= low
        mask &= ~low
    return int(out)


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
        options = ordinary_plays(fs[0], leading, led, best_led, best_trump, trump, must_trump, lead_honors)
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
            keys[k] = _option_key(
                c,
                fs[1],
                my_card >= 0,
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
    return int(np.int64((z ^ (z >> np.uint64(32))) >> np.uint64(1)))


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

    Bit-parallel: a card of a run is its highest unless an allowed card lies above it across passable
    cards only, in the same suit; filling down from the allowed cards through the passable ones marks
    every card that has one (the lowest, filling up). ``tests/test_cinch_speed.py`` holds this to the
    rank-by-rank scan it replaced on every arrangement of a suit.
    """
    allowed &= ALL_CARDS
    skip = passable & ~my_hand & ~allowed & ALL_CARDS  # cards a run passes over
    # cards with an allowed card of their run above them / below them (never across a suit's edge)
    has_higher = (_fill_down(allowed, skip & _NOT_TOP_RANK) >> 1) & _NOT_TOP_RANK
    has_lower = (_fill_up(allowed, skip & _NOT_BOTTOM_RANK) << 1) & _NOT_BOTTOM_RANK
    return allowed & ~(has_higher & has_lower)


@njit(cache=True)
def _fill_down(gen: int, pro: int) -> int:
    """``gen`` and every card reached from it going down one rank at a time through ``pro`` (Kogge-Stone fill).

    ``pro`` must not hold a suit's top rank, so that no fill crosses from one suit into the next.
    """
    gen |= pro & (gen >> 1)
    pro &= pro >> 1
    gen |= pro & (gen >> 2)
    pro &= pro >> 2
    gen |= pro & (gen >> 4)
    pro &= pro >> 4
    gen |= pro & (gen >> 8)
    return gen


@njit(cache=True)
def _fill_up(gen: int, pro: int) -> int:
    """``_fill_down`` going up; ``pro`` must not hold a suit's bottom rank."""
    gen |= pro & (gen << 1)
    pro &= pro << 1
    gen |= pro & (gen << 2)
    pro &= pro << 2
    gen |= pro & (gen << 4)
    pro &= pro << 4
    gen |= pro & (gen << 8)
    return gen


@njit(cache=True)
def _strength(c: int, trump: int) -> int:
    return (100 if c // 13 == trump else 0) + c % 13
