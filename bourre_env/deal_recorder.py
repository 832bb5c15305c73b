"""A game's hand history written once each deal is over, from the state and a few numbers a move.

``bourre_env.history.Recording`` wraps the env and builds each action's entry (its description, phase and public
text) as it is played, then copies the whole record through JSON and rebuilds the rules' entry on every
``history()``: about 190 µs a decision of a five-seat game, three quarters of what a game cost the arena's server.
``DealRecorder`` writes the same record, entry for entry, for far less, watching the game from outside the env: the
loop that plays it calls ``dealt(env)`` after the reset and ``stepped(decision, action, before, env)`` after each
action (``before``: a copy of the state vector before it), the hooks of ``train.table``'s observers. During play it
keeps, per move, the seat, the phase, the action, the hand before it (an integer mask) and what the move announced;
the entries are written once the deal is over (the opening and the results by ``history``'s own functions), the
rules' entry is built once per recorder, and card names come from a table. ``tests/test_deal_recorder.py`` holds
its records equal to ``Recording``'s, which stays the format's reference, on games of every phase.

Use: ``recorder = DealRecorder(rules, preset)``; before each game ``recorder.next_game(deck, env_seed)`` (the deck
the env is reset with, ``None`` when it shuffles one, and its reset seed) and the game played with the recorder
watching; after it, ``recorder.history(labels)`` is ``Recording.history(labels)``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from bourre_env import core, history
from bourre_env.actions import describe
from bourre_env.card_masks import cards_of
from bourre_env.core.rules import Rules
from bourre_env.words import plural

__all__ = ["DealRecorder"]


class DealRecorder:
    """Writes ``bourre_env.history.Recording``'s record of the games it watches (module docstring)."""

    def __init__(self, rules: Rules, preset: str | None = None) -> None:
        self.rules = rules
        self.params = rules.params()
        self._deck: list[int] | None = None
        self._env_seed: int | None = None
        self._ready = False
        # built once: the record's rules entry, and its text, read back for each history (a fresh copy each time)
        self._rules_text = history._rules_text(rules, preset)
        self._seed: str | None = None
        self._deals: list[dict[str, Any]] = []
        # the text of each action that is no stay, by (action, phase): it does not depend on the hand
        self._descriptions: dict[tuple[int, int], str] = {}
        self._open: dict[str, Any] | None = None
        self._moves: list[tuple[int, int, int, int, int, int]] = []
        self._rake_before = 0

    def next_game(self, deck: Sequence[int] | None, env_seed: int | None) -> None:
        """The next game's deck (card ids in dealing order, ``None``: the env shuffles one) and reset seed."""
        self._deck = None if deck is None else list(map(int, deck))
        self._env_seed = env_seed
        self._ready = True

    # ------------------------------------------------------------------ the loop's hooks
    def dealt(self, env: Any) -> None:
        if not self._ready:
            raise ValueError("DealRecorder: call next_game(deck, env_seed) before each game is played")
        self._ready = False
        s = env.unwrapped.state_vector
        self._seed = None if self._env_seed is None else str(int(self._env_seed))
        self._deals = []
        self._start(s, self._deck if self._deck is not None else history.dealing_order(s, self.rules))

    def _start(self, s: np.ndarray, deck: list[int]) -> None:
        self._open = history._deal_opening(s, self.rules, deck)
        self._moves = []
        self._laid_down: dict[int, int] = {}
        self._rake_before = int(s[core.S_RAKE_TOTAL])

    def stepped(self, decision: Any, action: int, before: np.ndarray, env: Any) -> None:
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
        descriptions = self._descriptions
        for seat, phase, action, hand, round_, announced in self._moves:
            if action < core.STAY_BASE:
                description = descriptions.get((action, phase)) or describe(action, None, phase)
                descriptions[action, phase] = description
            else:
                description = describe(action, cards_of(hand), phase)
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
        laid_down = {seat: cards_of(hand) for seat, hand in self._laid_down.items()}
        self._open["results"] = history._results(after, self.rules, laid_down, self._rake_before)
        self._deals.append(self._open)
        self._open = None

    def deal_history(self, seats: Sequence[str | None], deal: int) -> dict[str, Any]:
        """The record of finished deal ``deal`` of the game (from 0) alone, as ``history`` writes a game: a session's
        deal as it settles. It replays on its own (its opening holds the dealer and the pot it began with), and the
        ``deals`` of a session's deals, joined in order, are the session's ``history``."""
        if not 0 <= deal < len(self._deals):
            raise ValueError(f"deal {deal}: this game has finished {plural(len(self._deals), 'deal')}")
        return {**self.history(seats), "deals": [self._deals[deal]]}

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
