"""``style:NAME``: simple players of one habit each, a zoo of fields unlike the agents that trained together.

Self-play, the reference agents and the ladder share a way of playing; a table of people does not. Each style
exaggerates one habit that real players have, so that an agent can be rated against fields it never met
(``bourre eval --candidate ppo --field style:eager-low``; ``python -m train.research.style_zoo`` rates agents
against every style). They read only their own observation and play only legal actions, under every rule option.

================  =====================================  ===================================================
style             enters the deal                        plays a card
================  =====================================  ===================================================
``eager-random``  always                                 a uniformly random legal card
``eager-high``    always                                 its strongest legal card
``eager-low``     always                                 its weakest legal card
``station``       with a trump in hand                   the cheapest card that beats the trick so far, else
                                                         its weakest
``rock``          with two trumps or the ace of trumps   as ``station``
``coin-flip``     at one deal in two, whatever it holds  its strongest legal card
================  =====================================  ===================================================

Every style draws alike: it keeps its trumps and aces and discards the rest (or, where a rule limits the
discards, the legal draw that discards most of them and nothing else). Where the rules ask more of a player it
answers plainly: named trump is the suit it holds most of; a declaration or a second chance to pass follows
whether it enters. A card's strength is its rank, a trump's its rank above every other suit's; a card "beats the
trick so far" when the rules core's ``trick_winner`` would give it the trick if no one played after it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents.base import Observation, legal_actions
from bourre_env.core import NAME_TRUMP_BASE, PASS, STAY_BASE, trick_winner
from bourre_env.core.bits import ACE
from bourre_env.core.cards import NUM_RANKS
from bourre_env.observation import (
    O_HAND,
    O_LEADER,
    O_LED,
    O_PHASE,
    O_PLAYED_BY,
    O_PLAYED_IN,
    O_ROUND,
    O_TRICK_NO,
    O_TRUMP,
    ROUND_NAME_TRUMP,
    S,
    T,
)

__all__ = ["STYLES", "StyleAgent", "make_style"]

_NO_TRICK = T  # trick_no's last entry: play over or not started


def _trump(vector: np.ndarray) -> int:
    """The trump suit, -1 until it is named."""
    onehot = vector[O_TRUMP : O_TRUMP + 4]
    return int(np.argmax(onehot)) if onehot.max() > 0.5 else -1


def strength(card: int, trump: int) -> int:
    """A card's rank, 13 more for a trump."""
    return card % NUM_RANKS + (NUM_RANKS if card // NUM_RANKS == trump else 0)


def _hand(vector: np.ndarray) -> list[int]:
    return [int(c) for c in np.flatnonzero(vector[O_HAND : O_HAND + 52] > 0.5)]


def _trick_so_far(vector: np.ndarray) -> tuple[np.ndarray, int] | None:
    """The trick under way as the rules core reads one: each relative seat's card (-1: none yet) and the leader's
    seat; None when the seat leads."""
    trick = int(np.argmax(vector[O_TRICK_NO : O_TRICK_NO + T + 1]))
    if trick == _NO_TRICK or vector[O_LED : O_LED + 4].max() < 0.5:
        return None
    cards = np.full(S, -1, dtype=np.int64)
    for card in np.flatnonzero(vector[O_PLAYED_IN + trick : O_PLAYED_IN + 52 * T : T] > 0.5):
        cards[int(np.argmax(vector[O_PLAYED_BY + S * card : O_PLAYED_BY + S * (card + 1)]))] = card
    return cards, int(np.argmax(vector[O_LEADER + S * trick : O_LEADER + S * (trick + 1)]))


def _cheapest_winner(vector: np.ndarray, cards: list[int]) -> int:
    """The cheapest card that would win the trick if no one played after it (the core's ``trick_winner``), else
    the weakest; on lead the strongest."""
    trump = _trump(vector)
    so_far = _trick_so_far(vector)
    if so_far is None:
        return max(cards, key=lambda c: strength(c, trump))
    trick, leader = so_far

    def wins(card: int) -> bool:
        trick[0] = card  # relative seat 0: this seat
        return bool(trick_winner(trick, leader, S, trump) == 0)

    winners = [c for c in cards if wins(c)]
    return min(winners or cards, key=lambda c: strength(c, trump))


def _keep_trumps_and_aces(vector: np.ndarray, legal: np.ndarray) -> int:
    """The draw that discards every card but trumps and aces, or the legal one that discards most of those and
    nothing else (standing pat at least), or the first legal action."""
    hand, trump = _hand(vector), _trump(vector)
    wanted = sum(1 << i for i, c in enumerate(hand) if c // NUM_RANKS != trump and c % NUM_RANKS != ACE)
    stays = [int(a) - STAY_BASE for a in legal if a >= STAY_BASE and (int(a) - STAY_BASE) & ~wanted == 0]
    if not stays:
        return int(legal[0])
    return STAY_BASE + max(stays, key=lambda m: (m.bit_count(), m))


def _named_trump(vector: np.ndarray, legal: np.ndarray) -> int:
    """The suit it holds most cards of (the higher of its best cards on a tie)."""
    hand = _hand(vector)

    def held(action: int) -> tuple[int, int]:
        suit = action - NAME_TRUMP_BASE
        return sum(c // NUM_RANKS == suit for c in hand), max((c for c in hand if c // NUM_RANKS == suit), default=-1)

    return max((int(a) for a in legal), key=held)


class StyleAgent:
    """A player of one style (``STYLES``): ``enters`` says whether it plays the deal, ``card`` which card."""

    def __init__(self, style: str, seed: int | None = 0) -> None:
        if style not in STYLES:
            raise ValueError(f"unknown style {style!r}; known: {', '.join(STYLES)}")
        self.name = f"style:{style}"
        self.enters, self.card = STYLES[style]
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    def act(self, observation: Observation) -> int:
        vector = observation["observation"]
        legal = legal_actions(observation)
        if vector[O_PHASE + 1] > 0.5:  # trick play
            return self.card(vector, [int(a) for a in legal], self.rng)
        if vector[O_ROUND + ROUND_NAME_TRUMP] > 0.5:
            return _named_trump(vector, legal)
        staying = [int(a) for a in legal if a != PASS]
        if PASS in legal and (not staying or not self.enters(vector, self.rng)):
            return PASS
        return _keep_trumps_and_aces(vector, np.asarray(staying))


def _always(_vector: np.ndarray, _rng: np.random.Generator) -> bool:
    return True


def _with_a_trump(vector: np.ndarray, _rng: np.random.Generator) -> bool:
    trump = _trump(vector)
    return any(c // NUM_RANKS == trump for c in _hand(vector))


def _with_two_trumps_or_the_ace(vector: np.ndarray, _rng: np.random.Generator) -> bool:
    trump = _trump(vector)
    trumps = [c for c in _hand(vector) if c // NUM_RANKS == trump]
    return len(trumps) >= 2 or any(c % NUM_RANKS == ACE for c in trumps)


def _half_the_time(_vector: np.ndarray, rng: np.random.Generator) -> bool:
    return bool(rng.random() < 0.5)


def _random_card(_vector: np.ndarray, cards: list[int], rng: np.random.Generator) -> int:
    return cards[int(rng.integers(len(cards)))]


def _strongest(vector: np.ndarray, cards: list[int], _rng: np.random.Generator) -> int:
    trump = _trump(vector)
    return max(cards, key=lambda c: strength(c, trump))


def _weakest(vector: np.ndarray, cards: list[int], _rng: np.random.Generator) -> int:
    trump = _trump(vector)
    return min(cards, key=lambda c: strength(c, trump))


def _cheap(vector: np.ndarray, cards: list[int], _rng: np.random.Generator) -> int:
    return _cheapest_winner(vector, cards)


Enters = Callable[[np.ndarray, np.random.Generator], bool]
Plays = Callable[[np.ndarray, list[int], np.random.Generator], int]

STYLES: dict[str, tuple[Enters, Plays]] = {
    "eager-random": (_always, _random_card),
    "eager-high": (_always, _strongest),
    "eager-low": (_always, _weakest),
    "station": (_with_a_trump, _cheap),
    "rock": (_with_two_trumps_or_the_ace, _cheap),
    "coin-flip": (_half_the_time, _strongest),
}
"""Each style's rule for entering a deal and for playing a card (the module's table)."""


def make_style(variant: str | None, seed: int | None) -> StyleAgent:
    """``agents.make("style:NAME")``'s factory."""
    if not variant:
        raise ValueError(f"style: name one, style:NAME with NAME one of {', '.join(STYLES)}")
    return StyleAgent(variant, seed)
