"""The opponent pool of self-play training: each opponent seat draws, deal by deal, who plays it.

Members are agent specs (``"heuristic"``, ``"random"``) and frozen snapshots of the learner
(exported ``.npz`` policies, ``agents.ppo``). Each seat draws a kind with the configured weights
(``heuristic``, ``random``, ``snapshot``), and a snapshot kind draws one of the kept snapshots
uniformly; with no snapshot yet, the snapshot weight goes to the heuristic. ``PoolEnv`` is the
single-learner env with one ``PoolSeat`` per opponent seat and ``set_snapshots`` for the trainer,
which calls it in every subprocess through ``VecEnv.env_method``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

import agents
from agents.base import Agent, Observation
from bourre_env.core.rules import Rules
from bourre_env.single_agent import BourreSingleAgentEnv

__all__ = ["PoolWeights", "PoolSeat", "PoolEnv"]


@dataclasses.dataclass(frozen=True)
class PoolWeights:
    """Relative chances of each kind of opponent, per seat and deal."""

    heuristic: float = 0.5
    random: float = 0.1
    snapshot: float = 0.4

    def __post_init__(self) -> None:
        values = dataclasses.astuple(self)
        if min(values) < 0 or sum(values) <= 0:
            raise ValueError(f"pool weights must be >= 0 with a positive sum, got {self}")


class PoolSeat:
    """One opponent seat: ``reset`` (called by the env at every deal) draws who plays the next deal."""

    def __init__(self, weights: PoolWeights, seed: int, snapshots: dict[str, Agent]) -> None:
        self.weights = weights
        self.rng = np.random.default_rng(seed)
        self.fixed = {
            "heuristic": agents.make("heuristic", int(self.rng.integers(2**31))),
            "random": agents.make("random", int(self.rng.integers(2**31))),
        }
        self.snapshots = snapshots  # shared by the seats of one env: path -> agent
        self.current: Agent = self.fixed["heuristic"]
        self.kind = "heuristic"

    def reset(self) -> None:
        w = self.weights
        chances = np.array(
            [w.heuristic + (0.0 if self.snapshots else w.snapshot), w.random, w.snapshot if self.snapshots else 0.0]
        )
        kind = ("heuristic", "random", "snapshot")[int(self.rng.choice(3, p=chances / chances.sum()))]
        if kind == "snapshot":
            keys = list(self.snapshots)
            self.current = self.snapshots[keys[int(self.rng.integers(len(keys)))]]
        else:
            self.current = self.fixed[kind]
        self.current.reset()
        self.kind = kind

    def act(self, observation: Observation) -> int:
        return self.current.act(observation)


class PoolEnv(BourreSingleAgentEnv):
    """``BourreSingleAgentEnv`` whose opponent seats are ``PoolSeat`` objects (see the module docstring)."""

    def __init__(self, weights: PoolWeights, seed: int, **options: Any) -> None:
        self._snapshot_agents: dict[str, Agent] = {}
        num_players = Rules.from_options(**options).num_players
        seats = [
            PoolSeat(weights, int(s), self._snapshot_agents)
            for s in np.random.SeedSequence([seed, 3]).generate_state(num_players - 1)
        ]
        super().__init__(opponents=seats, **options)

    def set_snapshots(self, paths: Sequence[str]) -> int:
        """Keep exactly these snapshot files in the pool (loading the new ones); returns how many are kept."""
        for path in [p for p in self._snapshot_agents if p not in paths]:
            del self._snapshot_agents[path]
        for path in paths:
            if path not in self._snapshot_agents:
                self._snapshot_agents[path] = agents.PPOAgent(path, name=f"snapshot:{path}")
        return len(self._snapshot_agents)
