"""``BourreVecEnv``: Stable-Baselines3's ``VecEnv`` over ``bourre_env.BourreVectorEnv``: many tables, one process.

sb3-contrib's ``MaskablePPO`` trains on it directly: ``get_action_masks`` calls ``env_method("action_masks")``,
which answers every table's mask at once. SB3's conventions are kept: ``reset()`` returns observations only
(``reset_infos`` holds the infos), ``step_wait`` returns ``(obs, rewards, dones, infos)`` with one info dict per
table, and a table whose episode ended carries ``terminal_observation``, ``TimeLimit.truncated`` (True when
the pot bound cut the episode) and ``episode`` (its return in chips, before ``reward_scale``, and its length)
in its info: the vector env resets it within the same step (``AutoresetMode.SAME_STEP``), which is SB3's own
autoreset.

``num_players`` may be several table sizes: table ``k`` then plays ``num_players[k % len(num_players)]``,
and each size is one ``BourreVectorEnv`` (one ``BatchGame`` holds one table size) over its share of the
tables; the observation layout is the same at every size, so one policy trains on them all.

The opponents of a table are seated for its episode: with ``deals_per_episode=K`` (a session) the players its other
seats drew (from a pool with ``opponent_weights``) at the session's first deal play every deal of it, as at a real
table, where ``BourreVectorEnv`` itself draws at every deal. With one deal per episode the two are the same, draw
for draw.

>>> venv = BourreVecEnv(num_envs=256, num_players=5, opponents="heuristic", agent_factory=make_batched)
>>> model = MaskablePPO("MlpPolicy", venv)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from bourre_env.vector_env import BourreVectorEnv

__all__ = ["BourreVecEnv"]


class BourreVecEnv(VecEnv):
    """SB3's ``VecEnv`` over ``BourreVectorEnv(num_envs, ...)``, one per table size; every other keyword goes to
    the vector envs. ``envs``: the vector envs (``env``: the first), ``sizes``: the table size of each table."""

    def __init__(
        self, num_envs: int, reward_scale: float = 1.0, num_players: int | Sequence[int] | None = None, **kwargs: Any
    ) -> None:
        sizes: list[int | None]
        if isinstance(num_players, Sequence):
            sizes = [int(n) for n in num_players]
            if not sizes:
                raise ValueError("num_players: give at least one table size")
            if len(sizes) > num_envs:
                raise ValueError(f"num_players: {len(sizes)} table sizes need at least as many envs, got {num_envs}")
        else:
            sizes = [num_players]  # None: the rules' own size
        counts = [len(range(i, num_envs, len(sizes))) for i in range(len(sizes))]
        seed = kwargs.pop("opponent_seed", 0)
        self.envs: list[BourreVectorEnv] = []
        for i, (n, count) in enumerate(zip(sizes, counts, strict=True)):
            options: dict[str, Any] = {**kwargs, "opponent_seed": seed + 1000 * i}
            if n is not None:
                options["num_players"] = n
            self.envs.append(BourreVectorEnv(count, **options))
        self.env = self.envs[0]
        # the blocks hold tables 0, L, 2L, ... then 1, L + 1, ...: table k plays sizes[k % L]
        blocks = np.concatenate([np.arange(i, num_envs, len(sizes)) for i in range(len(sizes))])
        self._from_blocks = np.argsort(blocks, kind="stable")
        self._to_blocks = blocks
        self.sizes = np.asarray([e.num_players for e in self.envs], dtype=np.int64)[
            np.arange(num_envs) % len(self.envs)
        ]
        self.reward_scale = float(reward_scale)
        super().__init__(num_envs, self.env.single_observation_space, self.env.single_action_space)
        self._actions = np.zeros(self.num_envs, dtype=np.int64)
        self.episode_returns = np.zeros(self.num_envs, dtype=np.float64)  # raw chips, for Monitor-like logging
        self.episode_lengths = np.zeros(self.num_envs, dtype=np.int64)

    def _joined(self, parts: Sequence[np.ndarray]) -> np.ndarray:
        """Per-table arrays of the blocks as one array in table order."""
        return parts[0] if len(parts) == 1 else np.concatenate(parts)[self._from_blocks]

    def _split(self, values: np.ndarray) -> list[np.ndarray]:
        """A per-table array as one array per block."""
        if len(self.envs) == 1:
            return [values]
        ordered = values[self._to_blocks]
        return np.split(ordered, np.cumsum([e.num_envs for e in self.envs])[:-1])

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if any(s is not None for s in self._seeds) else None
        results = [e.reset(seed=None if seed is None else self._block_seed(seed, i)) for i, e in enumerate(self.envs)]
        self._reset_seeds()
        self._reset_options()
        seats = self._joined([infos["learner_seat"] for _, infos in results])
        self.reset_infos = [{"learner_seat": int(seats[i])} for i in range(self.num_envs)]
        self.episode_returns[:] = 0.0
        self.episode_lengths[:] = 0
        return self._joined([obs for obs, _ in results])

    @staticmethod
    def _block_seed(seed: int, i: int) -> int:
        """Block 0 takes the seed itself (one table size: the vector env's own seeding); others derive theirs."""
        return int(seed) if i == 0 else int(np.random.SeedSequence([int(seed), i]).generate_state(1)[0])

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        results = [e.step(a) for e, a in zip(self.envs, self._split(self._actions), strict=True)]
        obs = self._joined([r[0] for r in results])
        rewards = self._joined([r[1] for r in results])
        terminated = self._joined([r[2] for r in results])
        truncated = self._joined([r[3] for r in results])
        dones = terminated | truncated
        self.episode_returns += rewards
        self.episode_lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final_obs = self._joined(
                [r[4].get("final_obs", np.zeros_like(r[0])) for r in results]  # a block with no ending has none
            )
            for i in np.flatnonzero(dones):
                # SB3 bootstraps a truncated episode's value from terminal_observation; "episode" feeds ep_rew_mean
                infos[i] = {
                    "terminal_observation": final_obs[i],
                    "TimeLimit.truncated": bool(truncated[i]),
                    "episode": {"r": float(self.episode_returns[i]), "l": int(self.episode_lengths[i])},
                }
        self.episode_returns[dones] = 0.0
        self.episode_lengths[dones] = 0
        return obs, (rewards * self.reward_scale).astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        return self._joined([e.action_masks() for e in self.envs])

    def set_opponents(self, opponents: Any, opponent_weights: Sequence[float] | None = None) -> None:
        """``BourreVectorEnv.set_opponents`` at every table size."""
        for e in self.envs:
            e.set_opponents(opponents, opponent_weights)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks" and not method_args and not method_kwargs:
            masks = self.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        raise AttributeError(f"BourreVecEnv: the tables share one engine; {method_name!r} cannot be called per table")

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        if attr_name == "render_mode":
            return [None for _ in self._get_indices(indices)]
        value = getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise AttributeError(f"BourreVecEnv: the tables share one engine; cannot set {attr_name!r} per table")

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None for _ in range(self.num_envs)]

    def close(self) -> None:
        for e in self.envs:
            e.close()
