"""Card masks read in Python: the card ids of a mask (bit ``c`` set when card ``c`` is in it), one home for the loop
that the hand-history writers and the world sampler's plan each used to write.

The compiled core has its own helpers (``bourre_env.core.bits``); this is for the Python code around it, which
meets a mask as a Python integer or a numpy one read off the state vector.
"""

from __future__ import annotations

from typing import SupportsInt

from bourre_env.core.cards import NUM_CARDS

__all__ = ["cards_of"]

_CARD_BITS = (1 << NUM_CARDS) - 1


def cards_of(mask: SupportsInt) -> list[int]:
    """The card ids of a card mask, lowest first: its set bits among bits 0..51 (a higher bit names no card and
    is left out, so no mask's answer holds more than 52 ids, and a negative number ends the loop too)."""
    bits = int(mask) & _CARD_BITS
    out = []
    while bits:  # one turn per card in the mask, not one per card of the deck
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out
