"""``random``: a uniformly random legal action."""

from __future__ import annotations

import numpy as np

from agents.base import Observation, legal_actions


class RandomAgent:
    """Picks uniformly among the legal actions, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation) -> int:
        legal = legal_actions(observation)
        return int(legal[self.rng.integers(legal.size)])

    def reset(self) -> None:
        pass
