"""Trick rules: who wins a trick, which cards the ordinary rules allow, trump equivalents, what a play proves.

These are the rules of trick play without the cinch's (``bourre_env.core.cinch`` ranges over them); the
``PLAY`` phase of ``bourre_env.core`` combines the two.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import ACE, KING, QUEEN, _bit, above_mask, highest_card, suit_mask
from bourre_env.core.layout import S_ABSENT
from bourre_env.core.rules import MAX_PLAYERS, P_RENEGE


@njit(cache=True)
def trick_winner(cards_in_trick: np.ndarray, leader: int, n: int, trump: int) -> int:
    """Seat that wins a trick: highest trump, else highest card of the suit led. ``-1`` entries sit out."""
    led = cards_in_trick[leader] // 13
    best = -1
    best_key = -1
    for q in range(n):
        c = cards_in_trick[q]
        if c < 0:
            continue
        suit = c // 13
        if suit == trump:
            key = 100 + c % 13
        elif suit == led:
            key = c % 13
        else:
            key = -1
        if key > best_key:
            best_key = key
            best = q
    return best


@njit(cache=True)
def ordinary_legal(
    hand: int, led: int, trick_best_led: int, trick_best_trump: int, trump: int, must_trump: bool
) -> int:
    """Cards of ``hand`` the ordinary rules of trick play allow (docs/rules.md, priorities 1-3), when following.

    ``trick_best_led`` / ``trick_best_trump``: highest card of the led suit / of trumps in the trick, -1 if none.
    """
    follow = hand & suit_mask(led)
    trumps = hand & suit_mask(trump)
    if follow:
        if led == trump or trick_best_trump < 0:
            beat = follow & above_mask(trick_best_led)
            return beat if beat else follow
        return follow
    if trumps:
        over = trumps & above_mask(trick_best_trump) if trick_best_trump >= 0 else trumps
        if over:
            return over
        return trumps if must_trump else hand
    return hand


@njit(cache=True)
def ordinary_plays(
    hand: int,
    leading: bool,
    led: int,
    trick_best_led: int,
    trick_best_trump: int,
    trump: int,
    must_trump: bool,
    lead_honors: bool,
) -> int:
    """Cards of ``hand`` the ordinary rules allow, leading (any card; with ``lead_trump_honors`` a held A, K or Q
    of trumps) or following (``ordinary_legal``): the rules without the cinch's, which the cinch's definition
    ranges over."""
    if leading:
        honors = hand & honors_mask(trump) if lead_honors else np.int64(0)
        return honors if honors else hand
    return ordinary_legal(hand, led, trick_best_led, trick_best_trump, trump, must_trump)


@njit(cache=True)
def honors_mask(trump: int) -> int:
    base = 13 * trump
    return _bit(base + ACE) | _bit(base + KING) | _bit(base + QUEEN)


@njit(cache=True)
def highest_trump_equivalents(hand: int, trump: int, played: int) -> int:
    """The highest trump of ``hand`` and every trump of ``hand`` equivalent to it (docs/rules.md, cinch).

    A lower trump is equivalent when every trump between the two is in the hand or out of play: ``played``
    holds the cards played to a trick and a dead face-up card, and also the cards absent from a small deck
    (they do not exist, so they separate nothing).
    """
    trumps = hand & suit_mask(trump)
    if trumps == 0:
        return 0
    out = np.int64(0)
    gone = hand | played
    c = highest_card(trumps)
    low = 13 * trump
    while c >= low:
        if (trumps >> c) & 1:
            out |= _bit(c)
        elif (gone >> c) & 1:
            pass
        else:
            break
        c -= 1
    return int(out)


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
def _beats(c: int, led: int, best_led: int, best_trump: int, trump: int) -> bool:
    """Whether ``c`` would become the winning card of a trick with these best cards."""
    if c // 13 == trump:
        return c > best_trump
    return best_trump < 0 and c // 13 == led and c > best_led


@njit(cache=True)
def forbidden_after(
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
def proven_absent(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out[q]`` with the cards that seat ``q``'s plays to tricks this deal prove it does not hold.

    A legal play proves that the player held none of the cards the ordinary rules would have required
    instead (``forbidden_after``: a void in the suit led, no card that beats, trumps or overtrumps when
    one was due, no honour behind a non-honour lead with ``lead_trump_honors``). A hand only loses
    cards during trick play, so what was absent then is absent now. ``apply_play`` gathers this play
    by play (``S_ABSENT``). With ``illegal_action="renege"`` a play may have been a renege and proves
    nothing.
    """
    renege = p[P_RENEGE] == 1
    for q in range(MAX_PLAYERS):
        out[q] = 0 if renege else s[S_ABSENT + q]
