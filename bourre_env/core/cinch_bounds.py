"""The cinch's cheap bounds and checks (``bourre_env.core.cinch``): the cards a seat cannot see, the tricks that are
sure from here, and whether the hidden hands can still be dealt as a line of play needs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import (
    _bit,
    above_mask,
    face_bit,
    highest_card,
    lowest_card,
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
    PLAYING,
    S_DEALER,
    S_DECISION,
    S_FACE_RESHUFFLED,
    S_FACE_STATE,
    S_HAND,
    S_KNOWN_OUT,
    S_PLAYED,
)
from bourre_env.core.rules import (
    P_DECK_MASK,
)
from bourre_env.core.tricks import (
    trick_winner,
)


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
def sure_tricks(hand: int, trick: np.ndarray, leader: int, n: int, me: int, led: int, trump: int, others: int) -> int:
    """A lower bound on the tricks ``me`` takes from now on, whatever the others hold (within ``others``).

    Our trumps are matched against the higher trumps that could beat them; a trick under way adds
    its best trump as one more possible killer of the card we have yet to play to it. When we already
    played to it and our card is winning it: a trump joins the matching (each of our trumps lies in a
    trick of its own, and what can still beat it there is an unseen higher trump, as in a later trick);
    a card of another suit counts if nothing the others may hold beats it.
    """
    mine = trick[me]
    best_trump = -1
    for q in range(n):
        c = trick[q]
        if c >= 0 and c // 13 == trump and c > best_trump:
            best_trump = c
    winning = mine >= 0 and trick_winner(trick, leader, n, trump) == me
    return sure_tricks_at(hand, mine, winning, best_trump, trump, others)


@njit(cache=True)
def sure_tricks_at(hand: int, mine: int, winning: bool, best_trump: int, trump: int, others: int) -> int:
    """``sure_tricks`` from what it reads of the trick: our card in it (-1 for none), whether that card is
    winning it, and its best trump (-1 for none)."""
    if mine < 0:
        killers = others | (_bit(best_trump) if best_trump >= 0 else np.int64(0))
        return trump_lower_bound(hand, trump, killers)
    if not winning:
        return trump_lower_bound(hand, trump, others)
    if mine // 13 == trump:
        return trump_lower_bound(hand | _bit(mine), trump, others)
    safe = (others & suit_mask(trump)) == 0 and (others & above_mask(mine)) == 0
    return trump_lower_bound(hand, trump, others) + (1 if safe else 0)


@njit(cache=True)
def _face_held_by_other(s: np.ndarray, seat: int) -> bool:
    """The turned card is known to be in another playing seat's hand (a passed dealer laid it down)."""
    dealer = s[S_DEALER]
    return bool(s[S_FACE_STATE] == FACE_IN_HAND and dealer != seat and s[S_DECISION + dealer] == PLAYING)


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
def live_sure_tricks(hand: int, mine: int, winning: bool, best_trump: int, trump: int, live: int, later: int) -> int:
    """``sure_tricks_at`` with what can still beat our card in this trick told apart: ``live`` holds the cards some
    opponent may still play (each can beat at most one of our cards), ``later`` those that the opponents yet to
    play to this trick may hold.

    Our card winning the trick is sure when none of ``later`` beats it; it then needs no killer, and our trumps
    still in hand are matched against ``live`` as before.
    """
    if mine >= 0 and winning:
        if mine // 13 == trump:
            if (later & above_mask(mine)) == 0:
                return 1 + trump_lower_bound(hand, trump, live)
            return trump_lower_bound(hand | _bit(mine), trump, live)
        safe = (later & suit_mask(trump)) == 0 and (later & above_mask(mine)) == 0
        return trump_lower_bound(hand, trump, live) + (1 if safe else 0)
    return sure_tricks_at(hand, mine, winning, best_trump, trump, live)
