"""Trick play (phase ``PLAY``): the cards a seat may play, and what a play does to the trick, the deal and the pot.

The ordinary rules of trick play are ``bourre_env.core.tricks``'s, the cinch's ``bourre_env.core.cinch``'s; a deal's
last trick settles it (``bourre_env.core.settlement``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import (
    _bit,
    _n,
    face_bit,
    lowest_card,
    next_active,
    suit_mask,
)
from bourre_env.core.cards import (
    NUM_CARDS,
)
from bourre_env.core.cinch import (
    has_cinch_with,
)
from bourre_env.core.layout import (
    FACE_DEAD,
    FACE_IN_HAND,
    FACE_PLAYED,
    PLAY,
    PLAYING,
    S_ABSENT,
    S_CUR,
    S_DEALER,
    S_DECISION,
    S_FACE,
    S_FACE_STATE,
    S_HAND,
    S_LEADER,
    S_LED,
    S_MOVES,
    S_NACTIVE,
    S_NPLAYED,
    S_PHASE,
    S_PLAYED,
    S_RENEGED,
    S_TRICK_CARDS,
    S_TRICK_LEADER,
    S_TRICK_NO,
    S_TRICK_WINNER,
    S_TRICKS,
    S_TRUMP,
    SCRATCH_SIZE,
)
from bourre_env.core.rules import (
    MAX_PLAYERS,
    P_DECK_MASK,
    P_HAND_SIZE,
    P_LEAD_HONORS,
    P_MUST_TRUMP,
    P_RENEGE,
)
from bourre_env.core.settlement import (
    _settle,
)
from bourre_env.core.tricks import (
    _bests,
    forbidden_after,
    highest_trump_equivalents,
    ordinary_plays,
    trick_winner,
)


@njit(cache=True)
def _start_play(s: np.ndarray, p: np.ndarray) -> None:
    n = _n(p)
    active = 0
    lone = -1
    for q in range(n):
        if s[S_DECISION + q] == PLAYING:
            active += 1
            lone = q
    s[S_NACTIVE] = active
    if active == 1:
        # docs/rules.md: a lone player wins every trick without play.
        s[S_TRICKS + lone] = p[P_HAND_SIZE]
        _settle(s, p)
        return
    s[S_PHASE] = PLAY
    leader = next_active(s, n, s[S_DEALER])
    s[S_LEADER] = leader
    s[S_TRICK_LEADER] = leader
    s[S_CUR] = leader


@njit(cache=True)
def play_mask(s: np.ndarray, p: np.ndarray, out: np.ndarray, x: np.ndarray) -> None:
    """Legal actions of ``PLAY``: the cards the seat to act may play, cinch included (memoised in scratch ``x``)."""
    legal = play_legal_with(s, p, s[S_CUR], True, x)
    while legal:
        c = lowest_card(legal)
        legal &= legal - 1
        out[c] = 1


@njit(cache=True)
def _step_play(s: np.ndarray, p: np.ndarray, action: int, x: np.ndarray) -> bool:
    """A card of the hand: legal, or (``illegal_action="renege"``) played as a renege."""
    if action < 0 or action >= NUM_CARDS:
        return False
    seat = s[S_CUR]
    if not (s[S_HAND + seat] >> action) & 1:
        return False
    legal = play_legal_with(s, p, seat, True, x)
    if not (legal >> action) & 1 and not p[P_RENEGE]:
        return False
    play_card(s, p, action, legal)
    return True


@njit(cache=True)
def play_legal(s: np.ndarray, p: np.ndarray, seat: int, with_cinch: bool) -> int:
    """``play_legal_with`` with a fresh scratch array (nothing is remembered between calls)."""
    return play_legal_with(s, p, seat, with_cinch, np.zeros(SCRATCH_SIZE, dtype=np.int64))


@njit(cache=True)
def play_legal_with(s: np.ndarray, p: np.ndarray, seat: int, with_cinch: bool, x: np.ndarray) -> int:
    """Card mask the seat to act may play, by the ordinary rules and (``with_cinch``) the cinch rules; the cinch
    is memoised in the scratch array ``x``."""
    hand = s[S_HAND + seat]
    trump = s[S_TRUMP]
    tmask = suit_mask(trump)
    leading = s[S_NPLAYED] == 0
    best_led, best_trump = -1, -1
    if not leading:
        row = S_TRICK_CARDS + s[S_TRICK_NO] * MAX_PLAYERS
        best_led, best_trump = _bests(s[row : row + MAX_PLAYERS], _n(p), s[S_LED], trump)
    legal = ordinary_plays(
        hand, leading, s[S_LED], best_led, best_trump, trump, p[P_MUST_TRUMP] == 1, p[P_LEAD_HONORS] == 1
    )
    if not with_cinch or (legal & tmask) == 0:
        return legal
    last = s[S_NPLAYED] == s[S_NACTIVE] - 1
    if last and not leading:
        return legal
    # ranks missing from a small deck do not exist, so they count as gone; a dead face-up card is out of play
    gone = s[S_PLAYED] | ~p[P_DECK_MASK]
    if s[S_FACE_STATE] == FACE_DEAD:
        gone |= face_bit(s)
    equiv = highest_trump_equivalents(hand, trump, gone)
    if (legal & ~equiv) == 0:
        return legal  # the cinch could not narrow the choice: no need to search for it
    if has_cinch_with(s, p, seat, x):
        narrowed = legal & equiv
        if narrowed:
            return narrowed
    return legal


@njit(cache=True)
def play_card(s: np.ndarray, p: np.ndarray, card: int, legal: int) -> None:
    """Trick play without the checks of ``step``: the seat to act plays ``card`` of its hand, ``legal`` being
    its ``play_legal`` mask (a card outside it is a renege). For callers that drew ``card`` from ``legal``
    themselves (the batch API's random play), so that the legal cards are not worked out twice."""
    s[S_MOVES] += 1
    apply_play(s, p, card, legal)


@njit(cache=True)
def apply_play(s: np.ndarray, p: np.ndarray, card: int, legal: int) -> None:
    n = _n(p)
    seat = s[S_CUR]
    if not (legal >> card) & 1:
        s[S_RENEGED + seat] = 1
    s[S_HAND + seat] &= ~_bit(card)
    if card == s[S_FACE] and s[S_FACE_STATE] == FACE_IN_HAND:
        s[S_FACE_STATE] = FACE_PLAYED
    t = s[S_TRICK_NO]
    row = S_TRICK_CARDS + t * MAX_PLAYERS
    # what this play proves the player does not hold, kept for the cinch (``proven_absent``); a lead proves
    # something only under lead_trump_honors, so the trick's best cards are looked up for the other plays alone
    if s[S_NPLAYED] > 0:
        best_led, best_trump = _bests(s[row : row + MAX_PLAYERS], n, s[S_LED], s[S_TRUMP])
        s[S_ABSENT + seat] |= forbidden_after(
            card, False, s[S_LED], best_led, best_trump, s[S_TRUMP], p[P_MUST_TRUMP] == 1, p[P_LEAD_HONORS] == 1
        )
    elif p[P_LEAD_HONORS] == 1:
        s[S_ABSENT + seat] |= forbidden_after(card, True, -1, -1, -1, s[S_TRUMP], p[P_MUST_TRUMP] == 1, True)
    s[row + seat] = card
    s[S_PLAYED] |= _bit(card)
    if s[S_NPLAYED] == 0:
        s[S_LED] = card // 13
    s[S_NPLAYED] += 1
    if s[S_NPLAYED] < s[S_NACTIVE]:
        s[S_CUR] = next_active(s, n, seat)
        return
    winner = trick_winner(s[row : row + MAX_PLAYERS], s[S_LEADER], n, s[S_TRUMP])
    s[S_TRICK_WINNER + t] = winner
    s[S_TRICKS + winner] += 1
    s[S_TRICK_NO] = t + 1
    s[S_NPLAYED] = 0
    s[S_LED] = -1
    if t + 1 == p[P_HAND_SIZE]:
        _settle(s, p)
        return
    s[S_LEADER] = winner
    s[S_TRICK_LEADER + t + 1] = winner
    s[S_CUR] = winner
