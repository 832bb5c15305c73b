"""Bit and card helpers of the compiled core: card masks, bit counts, seats, the reshuffle's random stream.

Cards in a hand are bitmasks over card ids (bit ``c`` set when card ``c`` is held), so "cards of the suit
led that beat the 10" is one AND.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.cards import NUM_CARDS
from bourre_env.core.layout import PLAYING, S_DECISION, S_FACE
from bourre_env.core.rules import P_NUM_PLAYERS

ACE = 12
KING = 11
QUEEN = 10
SUIT_MASK0 = (1 << 13) - 1  # clubs; shift by 13 * suit
ALL_CARDS = (1 << NUM_CARDS) - 1


@njit(cache=True)
def _bit(c: int) -> int:
    return int(np.int64(1) << c)


@njit(cache=True)
def suit_mask(suit: int) -> int:
    return int(np.int64(SUIT_MASK0) << (13 * suit))


@njit(cache=True)
def above_mask(card: int) -> int:
    """Cards of ``card``'s suit ranked above it."""
    suit_top = np.int64(1) << (13 * (card // 13 + 1))
    return int(suit_top - (np.int64(1) << (card + 1)))


@njit(cache=True)
def popcount(x: int) -> int:
    """Number of set bits (SWAR: constant time, no loop over the bits)."""
    v = np.uint64(x)
    v = v - ((v >> np.uint64(1)) & np.uint64(0x5555555555555555))
    v = (v & np.uint64(0x3333333333333333)) + ((v >> np.uint64(2)) & np.uint64(0x3333333333333333))
    v = (v + (v >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int(np.int64((v * np.uint64(0x0101010101010101)) >> np.uint64(56)))


@njit(cache=True)
def lowest_card(x: int) -> int:
    """Lowest card id in a non-empty mask."""
    return popcount((x & -x) - 1)


@njit(cache=True)
def highest_card(x: int) -> int:
    """Highest card id in a non-empty mask (card masks use bits 0..51 only)."""
    x |= x >> 1
    x |= x >> 2
    x |= x >> 4
    x |= x >> 8
    x |= x >> 16
    x |= x >> 32
    return popcount(x) - 1


@njit(cache=True)
def cards_to_positions(hand: int, cards: int) -> int:
    """The hand positions (position i = i-th lowest card id) of the hand's cards in ``cards``, as a bitmask: the
    inverse of ``positions_to_cards``."""
    out = np.int64(0)
    k = 0
    for c in range(NUM_CARDS):
        if (hand >> c) & 1:
            if (cards >> c) & 1:
                out |= np.int64(1) << k
            k += 1
    return int(out)


@njit(cache=True)
def positions_to_cards(hand: int, positions: int) -> int:
    """Card mask of the hand positions set in ``positions`` (position i = i-th lowest card id)."""
    out = np.int64(0)
    k = 0
    for c in range(NUM_CARDS):
        if (hand >> c) & 1:
            if (positions >> k) & 1:
                out |= _bit(c)
            k += 1
    return int(out)


@njit(cache=True)
def splitmix64(state: np.ndarray) -> int:
    """Next 63-bit value of a splitmix64 stream kept in ``state[0]``."""
    state[0] += np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 as int64
    z = np.uint64(state[0])
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return int(np.int64(z >> np.uint64(1)))


@njit(cache=True)
def _n(p: np.ndarray) -> int:
    return int(p[P_NUM_PLAYERS])


@njit(cache=True)
def next_active(s: np.ndarray, n: int, seat: int) -> int:
    """The next playing seat clockwise after ``seat``."""
    for k in range(1, n + 1):
        q = (seat + k) % n
        if s[S_DECISION + q] == PLAYING:
            return q
    return -1


@njit(cache=True)
def face_bit(s: np.ndarray) -> int:
    """Bit of the card turned for trump, 0 when no card is turned."""
    return _bit(s[S_FACE]) if s[S_FACE] >= 0 else np.int64(0)
