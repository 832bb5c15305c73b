"""The flat action space: one ``Discrete(NUM_ACTIONS)`` for the draw decision and trick play.

=========  ===========================================================
id         meaning
=========  ===========================================================
0 .. 51    play the card with this id (``bourre_env.core.cards``)
52         ``PASS``: pass the deal (lay the hand down, out of the deal)
53 .. 116  ``STAY_BASE + m``: play the deal, discarding the hand positions set in the bitmask ``m``;
           position ``i`` is the ``i``-th lowest card id of the hand; ``m = 0`` stands pat
=========  ===========================================================

In a declaration round (phase ``core.DECLARE``, ``Rules.declaration`` "two_rounds" or "simultaneous") the only
actions are 52, pass, and 53 (``DECLARE_PLAY``), declare play: the discards follow in the
draw round, where 53.. are stays as above and there is no pass. At the second chance to pass
(phase ``core.SECOND_PASS``, ``Rules.second_pass_ante`` set) the only actions are 52, pass (drop
out), and 53 (``SECOND_STAY``), stay in the deal paying ``second_pass_ante``. When the dealer names
trump (phase ``core.NAME_TRUMP``, ``Rules.trump_card="named_by_dealer"``) the only actions are
53..56 (``NAME_TRUMP_BASE + suit``): name clubs, diamonds, hearts or spades.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from bourre_env.core import (
    DECLARE,
    DECLARE_PLAY,
    NAME_TRUMP,
    NAME_TRUMP_BASE,
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_DISCARD_SETS,
    PASS,
    SECOND_PASS,
    SECOND_STAY,
    STAY_BASE,
    cards,
)

__all__ = [
    "NUM_ACTIONS",
    "PASS",
    "STAY_BASE",
    "DECLARE_PLAY",
    "SECOND_STAY",
    "NAME_TRUMP_BASE",
    "play",
    "stay",
    "describe",
    "discard_cards",
    "is_stay",
    "is_card",
    "as_action_id",
]


def as_action_id(value: Any) -> int | None:
    """``value`` as an action id if it is one by type: a Python or numpy integer, or a numpy integer array of one
    element (what ``predict`` of Stable-Baselines3 returns for one observation); ``None`` for anything else, however
    it would convert (a bool, a float such as 52.5 or 52.0, a string such as "3", None). The one rule of every
    caller: the env's ``step``, the single-agent env (learner and opponents), evaluations and the agents' wrappers.
    The range and legality are the rules core's to check."""
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iu":
        value = value.reshape(())[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


def play(card: int | str) -> int:
    """Action id that plays ``card`` (an id or a card string)."""
    return cards.to_id(card)


def _hand_list(hand: Iterable[int | str] | str) -> list[int]:
    ids = cards.parse_many(hand)
    if len(set(ids)) != len(ids):
        raise ValueError(f"hand has a repeated card: {cards.to_strs(ids)}")
    return sorted(ids)


def stay(discard: Iterable[int | str] | str, hand: Iterable[int | str] | str) -> int:
    """Action id that plays the deal discarding ``discard`` (cards of ``hand``; may be empty)."""
    held = _hand_list(hand)
    if len(held) > NUM_DISCARD_SETS.bit_length() - 1:
        raise ValueError(f"a hand holds at most {NUM_DISCARD_SETS.bit_length() - 1} cards, got {len(held)}")
    to_discard = [] if isinstance(discard, str) and not discard.strip() else cards.parse_many(discard)
    mask = 0
    for c in to_discard:
        if c not in held:
            raise ValueError(f"cannot discard {cards.to_str(c)}: not in the hand {cards.to_strs(held)}")
        mask |= 1 << held.index(c)
    return STAY_BASE + mask


def is_card(action: int) -> bool:
    return 0 <= action < NUM_CARDS


def is_stay(action: int) -> bool:
    return STAY_BASE <= action < NUM_ACTIONS


def discard_cards(action: int, hand: Iterable[int | str] | str) -> list[int]:
    """The cards of ``hand`` that a stay action discards."""
    if not is_stay(action):
        raise ValueError(f"action {action} is not a stay action ({STAY_BASE}..{NUM_ACTIONS - 1})")
    held = _hand_list(hand)
    mask = action - STAY_BASE
    if mask >> len(held):
        raise ValueError(f"action {action} discards position(s) beyond the {len(held)}-card hand")
    return [c for i, c in enumerate(held) if mask >> i & 1]


def describe(
    action: int, hand: Iterable[int | str] | str | None = None, phase: int | None = None, public: bool = False
) -> str:
    """Readable text of an action, the one text every part of the package shows for it.

    With ``hand``, a stay names the cards it discards. ``phase`` (a ``core`` phase, e.g.
    ``StateView(state, n).phase``) names the actions that mean something else in that phase: in
    ``core.DECLARE``, 53 is "declare play"; in ``core.SECOND_PASS``, 53 is "stay (pay to play on)" and 52
    "pass (drop out)"; in ``core.NAME_TRUMP``, 53..56 are "name trump clubs" .. "name trump spades".
    ``public``: what the other players see of it, a stay told by its number of discards alone."""
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action must be an integer in 0..{NUM_ACTIONS - 1}, got {action!r}")
    action = int(action)  # numpy ids (from np.flatnonzero(mask)) are welcome
    if is_card(action):
        return f"play {cards.to_str(action)}"
    if phase == NAME_TRUMP and NAME_TRUMP_BASE <= action < NAME_TRUMP_BASE + cards.NUM_SUITS:
        return f"name trump {cards.SUIT_NAMES[action - NAME_TRUMP_BASE]}"
    if phase == SECOND_PASS and action == PASS:
        return "pass (drop out)"
    if action == PASS:
        return "pass"
    if phase == SECOND_PASS and action == SECOND_STAY:
        return "stay (pay to play on)"
    if phase == DECLARE and action == DECLARE_PLAY:
        return "declare play"
    mask = action - STAY_BASE
    if hand is None or public:
        count = bin(mask).count("1")
        if count == 0:
            return "play, stand pat"
        if public:
            return f"play, discard {count}"
        positions = [i for i in range(NUM_DISCARD_SETS.bit_length() - 1) if mask >> i & 1]
        return f"play, discard {count} (positions {', '.join(map(str, positions))})"
    dropped = discard_cards(action, hand)
    if not dropped:
        return "play, stand pat"
    return f"play, discard {len(dropped)}: {cards.to_strs(dropped)}"
