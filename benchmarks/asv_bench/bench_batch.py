"""``BatchGame``: random play with and without observations, and its step, masks and observations calls.

Every timed call starts from the same positions (``_common.positions``: 1,024 tables a few deals in), so the
samples of one benchmark are the same work; the times are per call."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import Suite, once, positions

PLAYERS = [5, 7]


class RandomPlay(Suite):
    """``BatchGame.random_play(DECISIONS)`` at 1,024 tables: ``DECISIONS`` random legal decisions per table, in
    compiled code, with and without encoding each decision's observation (16,384 decisions a call; building the
    positions compiled the kernel)."""

    params = (PLAYERS, [False, True])
    param_names = ["players", "observations"]
    DECISIONS = 16

    def setup(self, players: int, observations: bool) -> None:
        self.game = positions(players, self.tables).game

    def time_random_play(self, players: int, observations: bool) -> None:
        self.game.random_play(self.DECISIONS, with_observations=observations)


class Step(Suite):
    """``BatchGame.step`` at 1,024 tables: ``STEPS`` steps of one random legal action per table (chosen once per
    process from the masks met on the way), the masks and the choice out of the time."""

    params = PLAYERS
    param_names = ["players"]
    STEPS = 8

    def setup(self, players: int) -> None:
        self.game = positions(players, self.tables).game
        self.actions = once(("step", players, self.tables), self._actions)
        positions(players, self.tables)

    def _actions(self) -> list[np.ndarray]:
        rng = np.random.default_rng(0)
        actions = []
        for _ in range(self.STEPS):
            legal = [np.flatnonzero(row) for row in self.game.legal_masks()]
            actions.append(np.array([row[rng.integers(row.size)] for row in legal], dtype=np.int64))
            self.game.step(actions[-1])
        return actions

    def time_step(self, players: int) -> None:
        for actions in self.actions:
            self.game.step(actions)


class Queries(Suite):
    """``BatchGame.legal_masks`` and ``BatchGame.observations`` at 1,024 tables, into the caller's buffers."""

    params = PLAYERS
    param_names = ["players"]

    def setup(self, players: int) -> None:
        self.game: Any = positions(players, self.tables).game
        # compiles both (untimed) and makes the buffers
        self.masks, self.observations = once(
            ("queries", players, self.tables), lambda: (self.game.legal_masks(), self.game.observations())
        )
        positions(players, self.tables)  # the cinch memo as the positions left it, before every call

    def time_legal_masks(self, players: int) -> None:
        self.game.legal_masks(out=self.masks)

    def time_observations(self, players: int) -> None:
        self.game.observations(out=self.observations)
