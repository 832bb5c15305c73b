"""Batched players for ``bourre_env.BourreVectorEnv``: the heuristic, random, policy-file and style agents over many
rows.

Each implements the env's ``BatchedPlayer`` protocol, ``act_batch(observations, masks, rows) -> actions``,
with one numpy or compiled call for all the rows it is given; the heuristic and the styles of the zoo
(``agents.batched_styles.BatchedStylePlayer``, the styles' own compiled rules) also have the env's state path,
``act_game(game, rows)``, which skips building their observations. ``make_batched(spec, seed)`` maps an agent spec
string to one, and is the ``agent_factory`` to give the vector env:

>>> env = BourreVectorEnv(num_envs=1024, num_players=5, opponents="heuristic", agent_factory=make_batched)

Specs without a batched form (``"pimc"``, ``"ismcts"``) are built by ``agents.make`` and wrapped in
``PerRowPlayer`` (one Python call per row: correct, slow).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents.batched_styles import BatchedStylePlayer
from agents.heuristic.batch import BatchHeuristic
from agents.ppo import SHIPPED_MODEL, PolicyWeights, load_policy
from agents.styles import STYLES
from bourre_env.batch import BatchGame
from bourre_env.vector_env import BatchedPlayer, PerRowPlayer

__all__ = [
    "BatchedHeuristicPlayer",
    "BatchedRandomPlayer",
    "BatchedPolicyPlayer",
    "BatchedStylePlayer",
    "make_batched",
]


class BatchedHeuristicPlayer:
    """``agents.make("heuristic[:params]")`` for many rows: the compiled ``BatchHeuristic``, decision for decision the
    same as the Python agent given the same tie-break numbers."""

    def __init__(self, params: str = "default", seed: int | None = 0) -> None:
        self.heuristic = BatchHeuristic(params, seed=seed)
        self.name = self.heuristic.name

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return self.heuristic.act(np.ascontiguousarray(observations), np.ascontiguousarray(masks))

    def act_game(self, game: BatchGame, rows: np.ndarray) -> np.ndarray:
        """The vector env's fast path: the same decisions as ``act_batch`` on the rows' observations (and the same
        draws of tie-break numbers), observed and decided in one compiled call without building them."""
        return self.heuristic.act_at(game.states, game.params, rows, game.scratch, threads=game.threads)

    def __repr__(self) -> str:
        return f"BatchedHeuristicPlayer({self.name!r})"


class BatchedRandomPlayer:
    """A uniformly random legal action per row, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        counts = masks.sum(axis=1, dtype=np.int64)
        if (counts == 0).any():
            raise ValueError(f"masks: row {int(np.argmin(counts))} allows no action")
        # the k-th legal action of each row, k uniform in 0..count-1: the first column where the running count passes k
        k = (self.rng.random(masks.shape[0]) * counts).astype(np.int64)
        return np.argmax(np.cumsum(masks, axis=1, dtype=np.int64) > k[:, None], axis=1).astype(np.int64)

    def __repr__(self) -> str:
        return "BatchedRandomPlayer()"


class BatchedPolicyPlayer:
    """A policy file (``agents.ppo``) for many rows: one forward pass, then the most probable legal action (or a
    sample from the masked softmax with ``sample``), as ``PPOAgent`` plays."""

    def __init__(
        self, policy: PolicyWeights | str | Path, seed: int | None = 0, sample: bool = False, name: str = "ppo"
    ) -> None:
        self.policy = policy if isinstance(policy, PolicyWeights) else load_policy(policy)
        self.sample = sample
        self.rng = np.random.default_rng(seed)
        self.name = name

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        logits = np.where(masks.astype(bool), self.policy.logits(observations), -np.inf)
        if not self.sample:
            return np.argmax(logits, axis=1).astype(np.int64)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        cdf = np.cumsum(p, axis=1)
        u = self.rng.random((masks.shape[0], 1)) * cdf[:, -1:]
        return np.minimum(np.argmax(cdf > u, axis=1), masks.shape[1] - 1).astype(np.int64)

    def __repr__(self) -> str:
        return f"BatchedPolicyPlayer({self.name!r})"


def make_batched(spec: str, seed: int | None = 0) -> BatchedPlayer:
    """A batched player from an ``agents.make`` spec: ``"heuristic[:params]"``, ``"random"``, ``"ppo"``,
    ``"ppo:PATH"``, ``"style:NAME"``; any other spec is ``agents.make(spec, seed)`` wrapped in ``PerRowPlayer``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}; known: {agents.registered()}")
    name, _, variant = spec.strip().partition(":")
    if name == "heuristic":
        return BatchedHeuristicPlayer(variant or "default", seed)
    if name == "random":
        if variant:
            raise ValueError(f"the random agent has no variants, got {variant!r}")
        return BatchedRandomPlayer(seed)
    if name == "ppo":
        path: Any = Path(variant) if variant else SHIPPED_MODEL
        return BatchedPolicyPlayer(path, seed=seed, name=f"ppo:{variant}" if variant else "ppo")
    if name == "style":
        if variant not in STYLES:
            given = f"unknown style {variant!r}" if variant else "no style named"
            raise ValueError(f"{spec!r}: {given}; style:NAME with NAME one of {', '.join(STYLES)}")
        return BatchedStylePlayer(variant, seed)
    return PerRowPlayer(agents.make(spec, seed))
