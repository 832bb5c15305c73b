"""``BourreVecEnv``: Stable-Baselines3's ``VecEnv`` over ``bourre_env.BourreVectorEnv``: many tables, one process.

sb3-contrib's ``MaskablePPO`` trains on it directly: ``get_action_masks`` calls ``env_method("action_masks")``,
which answers every table's mask at once. SB3's conventions are kept: ``reset()`` returns observations only
(``reset_infos`` holds the infos), ``step_wait`` returns ``(obs, rewards, dones, infos)`` with one info dict per
table, and a table whose episode ended carries ``terminal_observation`` and ``TimeLimit.truncated`` (True when
the pot bound cut the episode) in its info: the vector env resets it within the same step
(``AutoresetMode.SAME_STEP``), which is SB3's own autoreset.

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
    """SB3's ``VecEnv`` over ``BourreVectorEnv(num_envs, ...)``; every keyword goes to the vector env."""

    def __init__(self, num_envs: int, reward_scale: float = 1.0, **kwargs: Any) -> None:
        self.env = BourreVectorEnv(num_envs, **kwargs)
        self.reward_scale = float(reward_scale)
        super().__init__(self.env.num_envs, self.env.single_observation_space, self.env.single_action_space)
        self._actions = np.zeros(self.num_envs, dtype=np.int64)
        self._seed: int | None = None
        self.episode_returns = np.zeros(self.num_envs, dtype=np.float64)  # raw chips, for Monitor-like logging
        self.episode_lengths = np.zeros(self.num_envs, dtype=np.int64)

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if any(s is not None for s in self._seeds) else None
        obs, infos = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        seats = infos["learner_seat"]
        self.reset_infos = [{"learner_seat": int(seats[i])} for i in range(self.num_envs)]
        self.episode_returns[:] = 0.0
        self.episode_lengths[:] = 0
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        obs, rewards, terminated, truncated, vinfos = self.env.step(self._actions)
        dones = terminated | truncated
        self.episode_returns += rewards
        self.episode_lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            # SB3 bootstraps a truncated episode's value from terminal_observation; "episode" feeds ep_rew_mean
            infos[i] = {
                "terminal_observation": vinfos["final_obs"][i],
                "TimeLimit.truncated": bool(truncated[i]),
                "episode": {"r": float(self.episode_returns[i]), "l": int(self.episode_lengths[i])},
            }
        self.episode_returns[dones] = 0.0
        self.episode_lengths[dones] = 0
        return obs, (rewards * self.reward_scale).astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        return self.env.action_masks()

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks" and not method_args and not method_kwargs:
            masks = self.env.action_masks()
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
        self.env.close()
