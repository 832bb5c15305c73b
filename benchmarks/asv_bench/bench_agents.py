"""The agents' batch paths: the compiled heuristic on 1,024 rows, and the policy network's forward pass."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import Suite, attribute, need, once, positions

PLAYERS = [5, 7]


def _observed(players: int, tables: int) -> tuple[np.ndarray, np.ndarray]:
    """The observations and masks of the positions' players to act (made once per process)."""

    def make() -> tuple[np.ndarray, np.ndarray]:
        found = positions(players, tables)
        made = (found.game.observations(), found.game.legal_masks())
        found.restore()
        return made

    return once(("observed", players, tables), make)


def _heuristic() -> Any:
    module = need("agents.heuristic.batch", "agents.heuristic_batch")
    return once(("heuristic",), lambda: module.BatchHeuristic("default", seed=0))


def _policy() -> tuple[Any, Any]:
    ppo = need("agents.ppo")
    return ppo, once(("policy",), lambda: ppo.load_policy(ppo.SHIPPED_MODEL))


class HeuristicAct(Suite):
    """``BatchHeuristic("default").act`` on the observations and masks of the positions' 1,024 tables, with fixed
    tie-break numbers."""

    params = PLAYERS
    param_names = ["players"]

    def setup(self, players: int) -> None:
        self.bot = _heuristic()
        self.obs, self.masks = _observed(players, self.tables)
        self.tie_breaks = once(("tie_breaks", self.tables), lambda: np.random.default_rng(0).random(self.tables))
        self.out = once(("actions", self.tables), lambda: np.empty(self.tables, dtype=np.int64))
        once(("act", players, self.tables), lambda: self.time_act(players))  # compiles (untimed)

    def time_act(self, players: int) -> None:
        self.bot.act(self.obs, self.masks, out=self.out, tie_breaks=self.tie_breaks)


class HeuristicActAt(Suite):
    """``BatchHeuristic("default").act_at`` on the positions' 1,024 tables themselves: each row observed in compiled
    code and decided at once (the vector env's opponents); commits that have it."""

    params = PLAYERS
    param_names = ["players"]

    def setup(self, players: int) -> None:
        self.act_at = attribute(_heuristic(), "act_at")
        self.rows = once(("rows", self.tables), lambda: np.arange(self.tables, dtype=np.int64))
        self.tie_breaks = once(("tie_breaks", self.tables), lambda: np.random.default_rng(0).random(self.tables))
        self.game: Any = positions(players, self.tables).game
        once(("act_at", players, self.tables), lambda: self.time_act_at(players))  # compiles (untimed)
        positions(players, self.tables)  # restored, the cinch memo too, before every call

    def time_act_at(self, players: int) -> None:
        self.act_at(self.game.states, self.game.params, self.rows, self.game.scratch, self.tie_breaks)


class PolicyLogits(Suite):
    """``PolicyWeights.logits`` of the shipped policy on the observations of the positions' 1,024 tables: dense
    numpy products in early commits, the compiled sparse pass (``forward_rows``) later."""

    params = PLAYERS
    param_names = ["players"]

    def setup(self, players: int) -> None:
        _ppo, self.weights = _policy()
        self.obs, _masks = _observed(players, self.tables)
        once(("logits", players, self.tables), lambda: self.time_logits(players))  # compiles, if compiled (untimed)

    def time_logits(self, players: int) -> None:
        self.weights.logits(self.obs)


class PolicyForwardRows(Suite):
    """``agents.ppo.forward_rows``, the compiled forward pass, into a buffer, on the same observations; commits that
    have it."""

    params = PLAYERS
    param_names = ["players"]

    def setup(self, players: int) -> None:
        ppo, weights = _policy()
        self.forward_rows = attribute(ppo, "forward_rows")
        self.packed = weights.packed
        self.obs, _masks = _observed(players, self.tables)
        self.out = once(
            ("logits_out", self.tables),
            lambda: np.empty((self.tables, self.packed.weights[-1].shape[1]), dtype=np.float32),
        )
        once(("forward_rows", players, self.tables), lambda: self.time_forward_rows(players))  # compiles (untimed)

    def time_forward_rows(self, players: int) -> None:
        packed = self.packed
        self.forward_rows(packed.weights, packed.biases, packed.tanh, self.obs, self.out)
