"""The hand history of an arena game, written once the deal is over from the state and a few numbers a move.

``bourre_env.history.Recording`` wraps the env and builds each action's entry (its description, phase and public
text) as it is played, then copies the whole record through JSON and rebuilds the rules' entry on every
``history()``: about 190 µs a decision of a five-seat game, three quarters of what a game cost the arena's server.
``HandRecorder`` is an observer of the table's loop (``train.table.Observer``) that writes the same record, entry
for entry, for far less: during play it keeps, per move, the seat, the phase, the action, the hand before it (an
integer mask) and what the move announced; the entries are written once the deal is over, the rules' entry is
built once per recorder, and card names come from a table. ``tests/test_arena_record.py`` holds its records equal to
``Recording``'s, which stays the format's reference, on games of every phase.

Use: ``recorder = HandRecorder(rules, preset)``; before each game ``recorder.deal = deal`` (the ``train.table.Deal``
it plays, whose deck the record names) and the game played with ``observers=(recorder,)``; after it,
``recorder.history(labels)`` is ``Recording.history(labels)``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from bourre_env import core, history
from bourre_env.actions import describe
from bourre_env.core import cards
from bourre_env.core.rules import Rules
from train.table import Deal, Decision

__all__ = ["HandRecorder"]

_CARD = tuple(cards.to_str(c) for c in range(core.NUM_CARDS))
_OUTCOMES = (
    ("won", core.OUTCOME_WON),
    ("tied", core.OUTCOME_TIED),
    ("bourre", core.OUTCOME_BOURRE),
    ("reneged", core.OUTCOME_RENEGED),
)


def _cards_of(mask: int) -> list[int]:
    """The card ids of a hand mask, lowest first (its set bits, not all 52)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class HandRecorder:
    """An observer of the table's loop that writes ``bourre_env.history.Recording``'s record (module docstring)."""

    def __init__(self, rules: Rules, preset: str | None = None) -> None:
        self.rules = rules
        self.params = rules.params()
        self.deal: Deal | None = None
        # built once: the record's rules entry, and its text, read back for each history (a fresh copy each time)
        self._rules_text = json.dumps(history.rules_record(rules, preset))
        self._seed: str | None = None
        self._deals: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None
        self._moves: list[tuple[int, int, int, int, int, int]] = []
        self._rake_before = 0

    # ------------------------------------------------------------------ the table's hooks
    def dealt(self, env: Any) -> None:
        if self.deal is None:
            raise ValueError("HandRecorder: set .deal to the deal before the game is played")
        s = env.unwrapped.state_vector
        seed = self.deal.env_seed
        self._seed = None if seed is None else str(int(seed))
        self._deals = []
        deck = list(self.deal.deck) if self.deal.deck is not None else history.dealing_order(s, self.rules)
        self._start(s, deck)

    def _start(self, s: np.ndarray, deck: list[int]) -> None:
        n = self.rules.num_players
        antes = -int(s[core.S_REWARD : core.S_REWARD + n].sum())  # a new deal's rewards are minus the antes paid
        self._open = {
            "deal": int(s[core.S_DEAL_NO]),
            "dealer": int(s[core.S_DEALER]),
            "pot_before": int(s[core.S_POT]) - antes,
            "deck": [_CARD[c] for c in deck],
            "reshuffle_seed": str(int(s[core.S_RNG])),
            "actions": [],
        }
        self._moves = []
        self._laid_down: dict[int, int] = {}
        self._rake_before = int(s[core.S_RAKE_TOTAL])

    def stepped(self, decision: Decision, action: int, before: np.ndarray, env: Any) -> None:
        if self._open is None:
            return
        s = env.unwrapped.state_vector
        action = int(action)
        seat, phase = int(before[core.S_CUR]), int(before[core.S_PHASE])
        hand = int(before[core.S_HAND + seat])
        ended = s[core.S_DEALS_DONE] != before[core.S_DEALS_DONE]
        after = s
        if ended:
            # the env may have dealt the next deal already: settle a copy of the state before to read this one
            after = before.copy()
            core.step(after, self.params, action)
        if action == core.PASS:
            self._laid_down[seat] = hand
        round_ = int(core.decision_round(before, self.params))
        self._moves.append((seat, phase, action, hand, round_, int(after[core.S_NDISCARD + seat])))
        if ended:
            self._close(after)
            if s[core.S_PHASE] not in (core.DEAL_OVER, core.GAME_OVER):  # the episode goes on: a new deal
                self._start(s, history.dealing_order(s, self.rules))

    # ------------------------------------------------------------------ the record
    def _close(self, after: np.ndarray) -> None:
        assert self._open is not None
        entries = self._open["actions"]
        for seat, phase, action, hand, round_, announced in self._moves:
            description = describe(action, _cards_of(hand), phase)
            if phase in core.DRAW_PHASES and action >= core.STAY_BASE:
                public = "play, stand pat" if announced == 0 else f"play, discard {announced}"
            else:
                public = description
            entries.append(
                {
                    "seat": seat,
                    "phase": history.PHASES[round_] if round_ >= 0 else history.PHASES[-1],
                    "action": action,
                    "description": description,
                    "public": public,
                }
            )
        self._open["results"] = self._results(after)
        self._deals.append(self._open)
        self._open = None

    def _results(self, s: np.ndarray) -> dict[str, Any]:
        n = self.rules.num_players
        hands = []
        playing = [s[core.S_DECISION + q] == core.PLAYING for q in range(n)]
        for q in range(n):
            if playing[q]:
                row = s[
                    core.S_TRICK_CARDS + q : core.S_TRICK_CARDS
                    + core.MAX_HAND_SIZE * core.MAX_PLAYERS : core.MAX_PLAYERS
                ]
                held = sorted([int(c) for c in row if c >= 0] + _cards_of(int(s[core.S_HAND + q])))
            else:
                held = _cards_of(self._laid_down.get(q, 0))
            hands.append([_CARD[c] for c in held])
        return {
            "decisions": ["played" if playing[q] else "passed" for q in range(n)],
            "tricks": [int(s[core.S_TRICKS + q]) for q in range(n)],
            "payments": [int(s[core.S_REWARD + q]) for q in range(n)],
            "outcomes": [[name for name, bit in _OUTCOMES if s[core.S_OUTCOME + q] & bit] for q in range(n)],
            "hands": hands,
            "pot": int(s[core.S_POT]),
            "rake": int(s[core.S_RAKE_TOTAL]) - self._rake_before,
        }

    def history(self, seats: Sequence[str | None]) -> dict[str, Any]:
        """The record of the game's finished deals, as ``Recording.history(seats)`` writes it (``ValueError`` if
        none is finished yet). The deals are handed over, not copied: the next game's record is a new one."""
        if not self._deals:
            raise ValueError("no finished deal to write: play a deal to its end first")
        n = self.rules.num_players
        if len(seats) != n:
            raise ValueError(f"seats: one entry per seat ({n}), got {len(seats)}")
        return {
            "format": history.FORMAT,
            "version": history.VERSION,
            "rules": json.loads(self._rules_text),
            "seats": [{"seat": q, "agent": seats[q]} for q in range(n)],
            "seed": self._seed,
            "deals": self._deals,
        }
