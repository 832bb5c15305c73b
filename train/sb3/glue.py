"""The Stable-Baselines3 glue of ``train.sb3.trainer``: masks, TensorBoard names, checkpoints and the policy file.

Nothing here is a training decision; each piece adapts SB3 (and sb3-contrib's ``MaskablePPO``) to this
project: for SB3's subprocess envs, the action masks travel with each step's infos (``MaskInInfo``,
``MasksFromInfos``: the trainer's envs before ``BourreVecEnv``, kept for the comparison in
``benchmarks/vector_env_speed.py`` and ``benchmarks/train_speed.py``), SB3's
scalar names become the project's namespaces (``make_logger``: ``losses/``, ``charts/``), checkpoints
are replaced atomically and read back as tensors only (``save_checkpoint``, ``load_checkpoint``), and
the trained actor is exported as the numpy policy file ``agents.ppo`` plays (``export_policy``).
"""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import Logger, TensorBoardOutputFormat
from stable_baselines3.common.vec_env import VecEnvWrapper

from agents.ppo import PolicyWeights, save_policy
from bourre_env.atomic_files import replacing
from train.runs import RunState
from train.sb3.trunk import trunk_policy_layers

__all__ = [
    "ACTIVATION",
    "ACTIVATIONS",
    "MaskInInfo",
    "MasksFromInfos",
    "export_policy",
    "load_checkpoint",
    "make_logger",
    "policy_weights",
    "save_checkpoint",
]

ACTIVATIONS = {"relu": torch.nn.ReLU}
"""Hidden-layer activations the exported policy file can name (``agents.ppo`` evaluates them)."""
ACTIVATION = "relu"
"""The policy's hidden activation: the name written in exported policy files, and the torch module."""


def policy_weights(policy: Any, meta: dict[str, Any]) -> PolicyWeights:
    """The actor of an sb3-contrib ``MaskableActorCriticPolicy`` built by ``build_model`` as ``PolicyWeights``."""

    def pair(weight: torch.Tensor, bias: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        return (
            weight.detach().cpu().numpy().astype(np.float32, copy=True),
            bias.detach().cpu().numpy().astype(np.float32, copy=True),
        )

    hidden = tuple(pair(w, b) for w, b in trunk_policy_layers(policy))
    return PolicyWeights(hidden, pair(policy.action_net.weight, policy.action_net.bias), ACTIVATION, meta)


def export_policy(model: Any, path: Path, meta: dict[str, Any]) -> Path:
    return save_policy(path, policy_weights(model.policy, {**meta, "num_timesteps": int(model.num_timesteps)}))


class MaskInInfo(gymnasium.Wrapper):
    """Adds the next decision's action mask to ``info`` (read by ``MasksFromInfos``)."""

    def _mask(self) -> np.ndarray:
        return self.env.get_wrapper_attr("action_masks")()

    def reset(self, **kwargs: Any) -> Any:
        obs, info = self.env.reset(**kwargs)
        return obs, {**info, "action_mask": self._mask()}

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {**info, "action_mask": self._mask()}


class MasksFromInfos(VecEnvWrapper):
    """MaskablePPO asks every env for its mask before each step, one more round trip to every subprocess per
    step; the masks come with the step's infos instead (``MaskInInfo``), and ``action_masks`` answers from them."""

    def reset(self) -> Any:
        obs = self.venv.reset()
        self.masks = [info["action_mask"] for info in self.venv.reset_infos]
        return obs

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        # an env that finished was reset at once: the mask of its next decision is in its reset info
        self.masks = [
            (self.venv.reset_infos[i] if done else info)["action_mask"]
            for i, (done, info) in enumerate(zip(dones, infos, strict=True))
        ]
        return obs, rewards, dones, infos

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> Any:
        if method_name == "action_masks" and not method_args and not method_kwargs:
            return [self.masks[i] for i in self._get_indices(indices)]
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)


SB3_RENAMES = {"train/": "losses/", "rollout/": "charts/", "time/": "charts/"}


def _renamed(key: str) -> str:
    for old, new in SB3_RENAMES.items():
        if key.startswith(old):
            return new + key[len(old) :]
    return key


class RenamedTensorBoard(TensorBoardOutputFormat):
    """TensorBoard events with SB3's keys renamed by ``SB3_RENAMES`` (``eval/`` is ours)."""

    def write(self, key_values: dict, key_excluded: dict, step: int = 0) -> None:
        super().write(
            {_renamed(k): v for k, v in key_values.items()}, {_renamed(k): v for k, v in key_excluded.items()}, step
        )


def make_logger(folder: Path) -> Logger:
    """SB3's logger writing TensorBoard events: SB3's ``train/`` as ``losses/``, ``rollout/`` and ``time/`` as
    ``charts/``."""
    folder.mkdir(parents=True, exist_ok=True)
    return Logger(str(folder), [RenamedTensorBoard(str(folder))])


def save_checkpoint(model: Any, run_dir: Path, state: RunState, seconds: float) -> None:
    """``checkpoint.zip`` then ``state.json``, each replaced atomically: an interrupted save keeps the last pair."""
    state.num_timesteps = int(model.num_timesteps)
    state.train_seconds += seconds
    bad = non_finite_parameter(model)
    if bad is not None:
        raise ValueError(
            f"training diverged at step {state.num_timesteps:,}: the network's {bad} holds non-finite "
            f"numbers (NaN or infinity); nothing was saved from it, and the run folder keeps its last "
            f"checkpoint and model; try a lower --learning-rate"
        )
    with replacing(run_dir / "checkpoint.zip", suffix=".zip") as tmp:
        model.save(tmp)
    state.save(run_dir / "state.json")


def non_finite_parameter(model: Any) -> str | None:
    """The name of the first parameter of ``model``'s policy that holds NaN or infinity, or None."""
    for name, tensor in model.policy.state_dict().items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            return str(name)
    return None


def load_checkpoint(model: MaskablePPO, path: Path, device: str) -> None:
    """The network and optimizer of ``path`` into ``model``, tensors only; ``ValueError`` naming the file otherwise.

    torch's own message for a file holding other objects suggests unpickling it (``weights_only=False``), which
    could run any code the file carries: that advice is never passed on here."""
    try:
        model.set_parameters(str(path), exact_match=True, device=device)
    except pickle.UnpicklingError:
        raise ValueError(
            f"{path}: holds objects other than tensors (or is damaged), and a checkpoint is only read "
            f"as tensors; resume from a checkpoint this trainer wrote, or start a new run"
        ) from None
    except (RuntimeError, ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if "weights_only" in reason:
            reason = "it holds objects other than tensors"
        raise ValueError(f"{path}: does not fit the network of args.json, or is damaged ({reason})") from None
    bad = non_finite_parameter(model)
    if bad is not None:
        # training on from NaN weights only spreads them, to the checkpoint and the model of the run on its next save
        raise ValueError(
            f"{path}: {bad} holds non-finite numbers (NaN or infinity), so the run cannot go on from it; "
            f"the run's model.npz and snapshots/ are left as they are"
        )
