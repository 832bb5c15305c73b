"""Helpers for the scripted deals of ``tests/test_scripted.py``.

A scripted deal is written as the hand of each seat in card notation; ``build_deck`` turns the
hands into the dealing order that ``reset(options={"deck": ...})`` and ``core.start_episode``
take (``deck[0]`` to the dealer's left, one card at a time round the table; the last card of the
dealer's hand as written is the face-up trump card, or, with a separate trump card
(``trump_card`` "separate" or "separate_dealer_may_take"), the ``turned`` card dealt after the hands;
with ``"named_by_dealer"`` no card is turned). Seats whose hand is
not given get the lowest remaining cards; the stock is the given ``stock`` cards, then the rest in
id order.

``Table`` drives one deal through the PettingZoo environment and ``CoreTable`` through
``bourre_env.core`` directly (for episodes whose later decks must be scripted too); both offer
the same scripting methods (``decide``, ``trick``, ``legal``...).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

import bourre_env
from bourre_env import actions, core
from bourre_env.core import cards
from bourre_env.core.rules import Rules
from bourre_env.view import StateView


def ids(text: str | Iterable[str | int]) -> list[int]:
    """Card ids of notation (``"AS KH"``), or of an iterable of card strings / ids; ``""`` is no card."""
    if isinstance(text, str) and not text.strip():
        return []
    return cards.parse_many(text)


def names(card_ids: Iterable[int]) -> set[str]:
    """A set of card strings (for readable comparisons)."""
    return {cards.to_str(int(c)) for c in card_ids}


def cardset(text: str) -> set[str]:
    """Normalised card strings of notation: ``cardset("ah th")`` is ``{"AH", "10H"}``."""
    return names(ids(text))


def mask_cards(mask: int) -> list[int]:
    """Card ids of a card bitmask, ascending."""
    m = int(mask)
    return [c for c in range(cards.NUM_CARDS) if (m >> c) & 1]


def build_deck(rules: Rules, dealer: int, hands: Mapping[int, str], stock: str = "", turned: str = "") -> list[int]:
    """The dealing order that gives each seat of ``hands`` exactly that hand (see the module docstring)."""
    n, h = rules.num_players, rules.hand_size
    deck_cards = rules.deck_cards()
    given = {seat: ids(text) for seat, text in hands.items()}
    separate = ids(turned)
    if (len(separate) == 1) != (rules.trump_card in ("separate", "separate_dealer_may_take")):
        raise ValueError(
            f"a separate trump card needs exactly one turned card, and only it: got {turned!r} "
            f"with trump_card={rules.trump_card!r}"
        )
    front = separate + ids(stock)
    used: list[int] = [c for hand in given.values() for c in hand] + front
    if len(set(used)) != len(used):
        raise ValueError(f"scripted deal repeats a card: {cards.to_strs(sorted(used))}")
    if not set(used) <= set(deck_cards):
        outside = sorted(set(used) - set(deck_cards))
        raise ValueError(f"scripted deal uses cards outside the deck: {cards.to_strs(outside)}")
    for seat, hand in given.items():
        if not 0 <= seat < n or len(hand) != h:
            raise ValueError(f"seat {seat}: need a seat in 0..{n - 1} and {h} cards, got {cards.to_strs(hand)}")
    rest = [c for c in deck_cards if c not in set(used)]
    for seat in range(n):
        if seat not in given:
            given[seat], rest = rest[:h], rest[h:]
    deck = [-1] * (n * h)
    for seat, hand in given.items():
        offset = (seat - dealer - 1) % n
        for k, c in enumerate(hand):
            deck[k * n + offset] = c
    return deck + front + rest


class _Driver:
    """Scripting methods shared by the env-driven and core-driven tables."""

    s: np.ndarray
    p: np.ndarray
    rules: Rules
    settled: np.ndarray | None = None
    """The state as the last deal was settled, when the last step ended a deal and the env went on to the next."""

    def _step(self, action: int) -> None:
        raise NotImplementedError

    def _deal_view(self) -> np.ndarray:
        """The state of the deal being scripted: ``settled`` right after a step that moved on to a new deal."""
        return self.s if self.settled is None else self.settled

    def _mask(self) -> np.ndarray:
        raise NotImplementedError

    # ---------------------------------------------------------------- views
    @property
    def n(self) -> int:
        return self.rules.num_players

    @property
    def view(self) -> StateView:
        """The state of the current deal, read-only."""
        return StateView(self.s, self.n)

    @property
    def seat(self) -> int:
        """Seat to act (-1 when nobody is)."""
        return self.view.to_act

    @property
    def phase(self) -> int:
        return self.view.phase

    @property
    def pot(self) -> int:
        return self.view.pot

    @property
    def trump(self) -> str:
        return cards.SUITS[self.view.trump]

    def hand_ids(self, seat: int) -> list[int]:
        return self.view.hand(seat)

    def hand(self, seat: int) -> set[str]:
        return names(self.hand_ids(seat))

    def tricks(self) -> list[int]:
        """Tricks won by each seat in the deal being scripted."""
        v = StateView(self._deal_view(), self.n)
        return [v.tricks(q) for q in range(self.n)]

    def deal_rewards(self) -> list[int]:
        """Chip change of each seat in the current (or just settled) deal, from the core's state."""
        return [self.view.reward(q) for q in range(self.n)]

    def legal(self) -> set[str]:
        """Cards the seat to act may play (from the action mask)."""
        mask = self._mask()
        return names(int(a) for a in np.flatnonzero(mask) if a < core.NUM_CARDS)

    def can_pass(self) -> bool:
        return bool(self._mask()[actions.PASS])

    def cinch(self, seat: int) -> bool:
        return bool(core.has_cinch(self.s, self.p, seat))

    # ---------------------------------------------------------------- acting
    def act(self, seat: int, action: int) -> None:
        assert self.seat == seat, f"script expected seat {seat} to act, but seat {self.seat} is to act"
        self._step(action)

    def stay(self, seat: int, discard: str = "") -> None:
        self.act(seat, actions.stay(discard, self.hand_ids(seat)))

    def pass_(self, seat: int) -> None:
        self.act(seat, actions.PASS)

    def play(self, seat: int, card: str) -> None:
        self.act(seat, actions.play(card))

    def declare(self, seat: int) -> None:
        """Declare play in a declaration round (``core.DECLARE``)."""
        self.act(seat, actions.DECLARE_PLAY)

    def decide(self, stays: Mapping[int, str]) -> None:
        """The draw round: seats in ``stays`` play discarding the given cards (``""``: stand pat); the rest pass.
        With a declaration round before it, the seats in ``stays`` declare play there and the rest pass."""
        while self.phase in (core.DECLARE, *core.DRAW_PHASES):
            seat = self.seat
            if self.phase == core.DECLARE:
                self.act(seat, actions.DECLARE_PLAY if seat in stays else actions.PASS)
            elif seat in stays:
                self.stay(seat, stays[seat])
            else:
                self.pass_(seat)

    def trick(self, plays: str) -> int:
        """Play one whole trick, the cards in playing order from the seat to act; returns the winner's seat."""
        t = self.view.trick_no
        for card in ids(plays):
            seat = self.seat
            assert card in self.hand_ids(seat), f"seat {seat} is to act but does not hold {cards.to_str(card)}"
            self.act(seat, card)
        return StateView(self._deal_view(), self.n).trick_winner(t)

    def trick_cards(self, t: int) -> dict[int, str]:
        """Card each seat played to trick ``t``."""
        row = self.view.trick_cards(t)
        return {q: cards.to_str(c) for q, c in enumerate(row) if c >= 0}


class Table(_Driver):
    """One scripted deal through ``bourre_env.env`` (the PettingZoo AEC environment)."""

    def __init__(
        self, hands: Mapping[int, str], *, dealer: int, pot: int = 0, stock: str = "", turned: str = "", **options: Any
    ) -> None:
        self.env = bourre_env.env(**options)
        self.raw: bourre_env.raw_env = self.env.unwrapped  # type: ignore[assignment]
        self.rules = self.raw.rules
        self.deck = build_deck(self.rules, dealer, hands, stock, turned)
        self.env.reset(seed=0, options={"deck": [cards.to_str(c) for c in self.deck], "dealer": dealer, "pot": pot})
        self.s = self.raw.state_vector
        self.p = self.raw._params

    def _step(self, action: int) -> None:
        # With deals_per_episode > 1 the env starts the next deal within the step that settles one; replaying
        # the step on a copy through the core keeps the settled deal in view for the script's assertions.
        before = self.s.copy()
        self.env.step(action)
        self.settled = None
        if self.view.deal_no != StateView(before, self.n).deal_no:
            assert core.step(before, self.p, action) and StateView(before, self.n).phase == core.DEAL_OVER
            self.settled = before

    def _mask(self) -> np.ndarray:
        return np.asarray(self.env.observe(self.env.agent_selection)["action_mask"])

    def rewards(self) -> list[float]:
        """The env's rewards of the last step, by seat."""
        return [self.env.rewards[a] for a in self.raw.possible_agents]


class CoreTable(_Driver):
    """A scripted episode driven through ``bourre_env.core`` directly, so that every deal's deck is scripted."""

    def __init__(
        self, rules: Rules, hands: Mapping[int, str], *, dealer: int, pot: int = 0, stock: str = "", turned: str = ""
    ) -> None:
        self.rules = rules
        self.p = rules.params()
        self.s = core.new_state()
        deck = np.asarray(build_deck(rules, dealer, hands, stock, turned), dtype=np.int64)
        core.start_episode(self.s, self.p, deck, dealer, pot, 12345)

    def next_deal(self, hands: Mapping[int, str], stock: str = "", turned: str = "") -> None:
        assert self.phase == core.DEAL_OVER, f"next_deal needs a settled deal, phase is {self.phase}"
        dealer = (self.view.dealer + 1) % self.n
        deck = np.asarray(build_deck(self.rules, dealer, hands, stock, turned), dtype=np.int64)
        core.next_deal(self.s, self.p, deck, 12345)

    def _step(self, action: int) -> None:
        if not core.step(self.s, self.p, action):
            raise ValueError(f"illegal action {action} for seat {self.seat}")

    def _mask(self) -> np.ndarray:
        out = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
        core.legal_actions(self.s, self.p, out)
        return out
