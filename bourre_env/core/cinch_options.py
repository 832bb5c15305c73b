"""The plays the cinch search considers at a node, and their order (``bourre_env.core.cinch``): equal cards merged
into one representative, each option keyed by strength, the strongest first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import (
    ACE,
    ALL_CARDS,
    QUEEN,
    above_mask,
    highest_card,
    lowest_card,
    popcount,
    suit_mask,
)
from bourre_env.core.tricks import (
    _beats,
    forbidden_after,
    honors_mask,
    ordinary_plays,
)

_NOT_TOP_RANK = ALL_CARDS & ~sum(1 << (13 * suit + 12) for suit in range(4))  # every card but the aces
_NOT_BOTTOM_RANK = ALL_CARDS & ~sum(1 << (13 * suit) for suit in range(4))  # every card but the twos


@njit(cache=True)
def _strength(c: int, trump: int) -> int:
    return (100 if c // 13 == trump else 0) + c % 13


@njit(cache=True)
def _mix(x: int) -> int:
    """A cheap deterministic integer hash (for the shuffled probe orderings)."""
    z = np.uint64(x) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)
    return int(np.int64((z ^ (z >> np.uint64(32))) >> np.uint64(1)))


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
def _strongest(options: int, trump: int) -> int:
    """The play the probes take for ``me`` (``_frame_options``'s order): greatest ``_strength``, the lowest card
    id among equals."""
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
def _frame_options(
    fs: np.ndarray,
    forbid: np.ndarray,
    count: np.ndarray,
    known: np.ndarray,
    d: int,
    me: int,
    gone: int,
    trump: int,
    must_trump: bool,
    lead_honors: bool,
    out: np.ndarray,
    keys: np.ndarray,
    policy: int,
) -> int:
    """The plays to try at frame ``d`` of the exhaustive search, most promising for the adversary first, into
    ``out[d]``; returns how many. Frame columns: hand, pool, tricks won, leader, cards played, seat to play,
    suit led, trick number, seat winning the trick, its best card of the suit led, its best trump, our card in it.

    An ordering of the probes (``policy`` of ``_option_key``), with equivalent plays of ours merged: of our cards
    with no card between them that someone else may hold (an unseen or a known held card), one is tried, since
    playing another leaves the same position once the ranks are renumbered among the live cards.
    """
    hand = fs[d, 0]
    pool = fs[d, 1]
    seat = fs[d, 5]
    leading = fs[d, 4] == 0
    led = fs[d, 6]
    best_led = fs[d, 9]
    best_trump = fs[d, 10]
    k = 0
    if seat == me:
        options = ordinary_plays(hand, leading, led, best_led, best_trump, trump, must_trump, lead_honors)
        blockers = pool
        for q in range(known.shape[1]):
            blockers |= known[d, q]
        x = options
        while x:
            c = lowest_card(x)
            x &= x - 1
            higher = options & above_mask(c)
            if higher and (blockers & above_mask(c) & ~above_mask(lowest_card(higher) - 1)) == 0:
                continue  # the next option up is equivalent
            out[d, k] = c
            # Our strongest cards first, while the opponents still hold every card that could beat them.
            keys[k] = -_strength(c, trump)
            k += 1
    else:
        kn = known[d, seat]
        free = count[d, seat] - popcount(kn)
        allowed = pool & ~forbid[d, seat] if free > 0 else np.int64(0)
        cand = kn | _run_representatives(allowed, pool | gone | kn, hand)
        my_card = fs[d, 11]
        mine_winning = my_card >= 0 and not leading and fs[d, 8] == me
        while cand:
            c = lowest_card(cand)
            cand &= cand - 1
            out[d, k] = c
            keys[k] = _option_key(
                c,
                pool,
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
                d,
            )
            k += 1
    # stable insertion sort by key: lists are short
    for i in range(1, k):
        key = keys[i]
        c = out[d, i]
        j = i - 1
        while j >= 0 and keys[j] > key:
            keys[j + 1] = keys[j]
            out[d, j + 1] = out[d, j]
            j -= 1
        keys[j + 1] = key
        out[d, j + 1] = c
    return k


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
    """The opponent's play a sort by ``_option_key`` puts first (least key, the lowest card id among equals); -1 if
    none.

    Policies 0 and 1 key a card by the constraints its play adds and
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
def next_active_arr(active: np.ndarray, n: int, seat: int) -> int:
    for k in range(1, n + 1):
        q = (seat + k) % n
        if active[q]:
            return q
    return -1
