"""Card notation and integer card ids.

A card id is ``suit * 13 + rank`` with suits ``C=0, D=1, H=2, S=3`` and ranks
``2=0, 3=1, ..., 10=8, J=9, Q=10, K=11, A=12``; so ``2C`` is 0, ``AC`` is 12,
``2D`` is 13 and ``AS`` is 51. A higher rank id is a higher card. Small decks
(the ``ranks`` rule option) use a subset of the same ids, so an id always
names the same card.

Notation is rank then suit, case-insensitive: ``"10H"``, ``"th"``, ``"As"``.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

NUM_CARDS = 52
NUM_RANKS = 13
NUM_SUITS = 4
SUITS = "CDHS"
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")

_RANK_BY_NAME = {name: i for i, name in enumerate(RANKS)}
_RANK_BY_NAME["T"] = 8


def suit_of(card: int) -> int:
    """Suit index (0..3) of a card id."""
    return card // NUM_RANKS


def rank_of(card: int) -> int:
    """Rank index (0 = 2 .. 12 = ace) of a card id."""
    return card % NUM_RANKS


def make(rank: int, suit: int) -> int:
    """Card id of a rank index and a suit index."""
    return suit * NUM_RANKS + rank


def parse_rank(text: str) -> int:
    """Rank index of a rank name (``"2".."10"``, ``"T"``, ``"J"``, ``"Q"``, ``"K"``, ``"A"``)."""
    key = text.strip().upper()
    if key not in _RANK_BY_NAME:
        raise ValueError(f"unknown rank {text!r}: expected one of {', '.join(RANKS)} (or T for 10)")
    return _RANK_BY_NAME[key]


def parse_card(text: str) -> int:
    """Card id of one card in notation, e.g. ``"10H"`` -> 34."""
    token = text.strip()
    if len(token) < 2:
        raise ValueError(f"bad card {text!r}: expected rank then suit, e.g. '10H' or 'AS'")
    suit = SUITS.find(token[-1].upper())
    if suit < 0:
        raise ValueError(f"bad card {text!r}: suit must be one of C, D, H, S")
    try:
        rank = parse_rank(token[:-1])
    except ValueError as err:
        raise ValueError(f"bad card {text!r}: {err}") from None
    return make(rank, suit)


def parse(text: str) -> int | list[int]:
    """Parse card notation.

    ``parse("10H")`` returns one id; a string of several cards separated by
    spaces or commas (``parse("AS KH 10D")``) returns a list of ids.
    """
    tokens = text.replace(",", " ").split()
    if not tokens:
        raise ValueError("no card in an empty string")
    if len(tokens) == 1:
        return parse_card(tokens[0])
    return [parse_card(t) for t in tokens]


def parse_many(text: str | Iterable[str | int]) -> list[int]:
    """Always a list: a notation string, or an iterable of card strings and ids."""
    if isinstance(text, str):
        parsed = parse(text)
        return parsed if isinstance(parsed, list) else [parsed]
    return [to_id(c) for c in text]


def to_id(card: str | int) -> int:
    """A card id from an id (an integer: a bool or a float such as ``3.0`` is no id) or a card string; checks the
    range."""
    if isinstance(card, str):
        return parse_card(card)
    try:
        # operator.index takes Python and numpy integers only; bools are integers to Python, not card ids
        value = None if isinstance(card, bool) else operator.index(card)
    except TypeError:
        value = None
    if value is None or not 0 <= value < NUM_CARDS:
        raise ValueError(f"bad card id {card!r}: expected an integer in 0..51 or a card string like '10H'")
    return value


def to_str(card: int) -> str:
    """Notation of a card id, e.g. 34 -> ``"10H"``."""
    card = to_id(card)
    return RANKS[rank_of(card)] + SUITS[suit_of(card)]


def to_strs(cards: Iterable[int]) -> str:
    """Space-separated notation of several card ids."""
    return " ".join(to_str(c) for c in cards)
