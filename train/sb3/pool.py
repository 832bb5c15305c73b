"""The sb3 trainer's opponent pool as batched players, over ``BourreVecEnv``: ``PoolVecEnv``.

The pool is ``train.learning.opponent_pool``'s: each opponent seat draws, episode by episode (a deal, or with
``session`` K the whole session: ``BourreVecEnv`` seats its opponents for the episode), the heuristic, the
random agent or a frozen snapshot of the learner, with the weights ``PoolWeights``; a snapshot draw
picks one of the kept snapshots uniformly, and until the first snapshot its weight goes to the
heuristic. Here each kind is one batched player (``agents.batched_players``) shared by every table, and
the draw is the vector env's (``opponent_weights``): the heuristic's weight, the random agent's, and
``snapshot / len(snapshots)`` for each snapshot, which gives each member the same chance as the
two-stage draw. ``set_snapshots`` replaces the snapshots from the tables' next episodes on (also as
``env_method("set_snapshots", paths)``, as the trainer's callback calls it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.batched_players import BatchedHeuristicPlayer, BatchedPolicyPlayer, BatchedRandomPlayer
from bourre_env.vector_env import BatchedPlayer
from train.learning.opponent_pool import PoolWeights
from train.sb3.vec_env import BourreVecEnv
from train.schedule import check_session

__all__ = ["PoolVecEnv", "pool_members"]


def pool_members(
    weights: PoolWeights, fixed: Sequence[BatchedPlayer], snapshots: Sequence[BatchedPlayer]
) -> tuple[list[BatchedPlayer], list[float]]:
    """The pool as members and their weights: ``fixed`` is (heuristic, random), ``snapshots`` the kept snapshots."""
    heuristic, random = fixed
    shared = weights.snapshot / len(snapshots) if snapshots else 0.0
    members = [heuristic, random, *snapshots]
    chances = [weights.heuristic + (0.0 if snapshots else weights.snapshot), weights.random]
    return members, chances + [shared] * len(snapshots)


class PoolVecEnv(BourreVecEnv):
    """``BourreVecEnv`` whose opponent seats draw from the self-play pool (see the module docstring); ``seed``
    seeds the pool's players and its draws; ``session``: deals per episode (a session of that many deals with the
    pot carried, the rules ``train.schedule.table_rules`` gives every table size)."""

    def __init__(
        self,
        num_envs: int,
        weights: PoolWeights,
        seed: int,
        num_players: Sequence[int],
        reward_scale: float = 1.0,
        session: int = 1,
    ) -> None:
        heuristic_seed, random_seed = (int(s) for s in np.random.SeedSequence([seed, 3]).generate_state(2))
        self.weights = weights
        self.fixed: tuple[BatchedPlayer, BatchedPlayer] = (
            BatchedHeuristicPlayer("default", heuristic_seed),
            BatchedRandomPlayer(random_seed),
        )
        self.snapshots: dict[str, BatchedPlayer] = {}
        members, chances = pool_members(weights, self.fixed, [])
        super().__init__(
            num_envs,
            reward_scale=reward_scale,
            num_players=num_players,
            opponents=members,
            opponent_weights=chances,
            opponent_seed=seed,
            deals_per_episode=check_session(session),
        )

    def set_snapshots(self, paths: Sequence[str]) -> int:
        """Keep exactly these snapshot files in the pool (loading the new ones); returns how many are kept."""
        kept = {p: self.snapshots.get(p) or BatchedPolicyPlayer(p, name=f"snapshot:{p}") for p in paths}
        self.snapshots = {p: player for p, player in kept.items() if player is not None}
        self.set_opponents(*pool_members(self.weights, self.fixed, list(self.snapshots.values())))
        return len(self.snapshots)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``set_snapshots`` reaches the pool through SB3's ``env_method`` too (once: every table shares it)."""
        if method_name == "set_snapshots":
            kept = self.set_snapshots(*method_args, **method_kwargs)
            return [kept for _ in self._get_indices(indices)]
        return super().env_method(method_name, *method_args, indices=indices, **method_kwargs)
