"""The trainers' checkpoint: ``checkpoint.pt`` (network and optimizer, tensors only) beside ``state.json``, and the
policy file of the network (``export``).

The batched PPO, Deep Monte-Carlo and expert-iteration trainers save and resume through these. A checkpoint is
replaced atomically, never by one holding NaN or infinite weights, and one that holds them is refused on
``--resume``: training on from NaN weights only spreads them to the run's model and snapshots. A checkpoint holds
tensors only (``torch.save`` of the state dicts, read back with ``weights_only=True``): it names no module of
this project, so checkpoints stay readable when modules move.
"""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path
from typing import Any, Protocol

import torch

from agents.ppo import save_policy
from bourre_env.atomic_files import replacing
from train.learning.policy_net import PolicyNet

__all__ = [
    "RunStateFile",
    "TrainingDivergedError",
    "check_finite",
    "export",
    "load_checkpoint",
    "non_finite_tensor",
    "save_checkpoint",
]


class RunStateFile(Protocol):
    """Where a run stands, saved beside its checkpoint as ``state.json`` (``train.runs.RunState``, or a trainer's
    own)."""

    def save(self, path: Path) -> None: ...


def non_finite_tensor(tensors: Any, prefix: str = "") -> str | None:
    """The name of the first floating-point tensor in ``tensors`` (nested dicts and lists, as a ``state_dict``)
    that holds NaN or infinity, or None."""
    if isinstance(tensors, torch.Tensor):
        if tensors.is_floating_point() and not bool(torch.isfinite(tensors).all()):
            return prefix or "a tensor"
        return None
    if isinstance(tensors, dict):
        items: Any = tensors.items()
    elif isinstance(tensors, (list, tuple)):
        items = enumerate(tensors)
    else:
        return None
    for key, value in items:
        found = non_finite_tensor(value, f"{prefix}.{key}" if prefix else str(key))
        if found is not None:
            return found
    return None


class TrainingDivergedError(ValueError):
    """The network's weights became NaN or infinite: the run stops, and its last good files stay as they are."""


def check_finite(net: PolicyNet, step: int) -> None:
    """``TrainingDivergedError`` if the network holds a non-finite weight, checked before anything is saved from it."""
    name = non_finite_tensor(net.state_dict())
    if name is not None:
        raise TrainingDivergedError(
            f"training diverged at step {step:,}: the network's {name} holds non-finite "
            f"numbers (NaN or infinity); nothing was saved from it, and the run folder keeps "
            f"its last checkpoint and model; try a lower --learning-rate or --max-grad-norm"
        )


def save_checkpoint(
    net: PolicyNet, optimizer: torch.optim.Optimizer, run_dir: Path, state: RunStateFile, step: int
) -> None:
    """``checkpoint.pt`` then ``state.json``, each replaced atomically: an interrupted save keeps the last pair, and a
    network gone non-finite (``TrainingDivergedError``, naming ``step``) never replaces a good checkpoint."""
    check_finite(net, step)
    with replacing(run_dir / "checkpoint.pt", suffix=".pt") as tmp:
        torch.save({"net": net.state_dict(), "optimizer": optimizer.state_dict()}, tmp)
    state.save(run_dir / "state.json")


def load_checkpoint(net: PolicyNet, optimizer: torch.optim.Optimizer, path: Path, device: torch.device) -> None:
    """The network and optimizer of ``path``, tensors only; ``ValueError`` naming the file otherwise.

    torch's own message for a file holding other objects suggests unpickling it (``weights_only=False``), which
    could run any code the file carries: that advice is never passed on here."""
    try:
        saved = torch.load(path, map_location=device, weights_only=True)
    except pickle.UnpicklingError:
        raise ValueError(
            f"{path}: holds objects other than tensors (or is damaged), and a checkpoint is only read "
            f"as tensors; resume from a checkpoint this trainer wrote, or start a new run"
        ) from None
    except (RuntimeError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"{path}: not a readable checkpoint ({first_line(e)})") from None
    try:
        net.load_state_dict(saved["net"])
        optimizer.load_state_dict(saved["optimizer"])
    except (RuntimeError, ValueError, KeyError, TypeError, IndexError) as e:
        raise ValueError(f"{path}: does not fit the network of args.json, or is damaged ({first_line(e)})") from None
    found = non_finite_tensor(saved)
    if found is not None:
        # training on from NaN weights only spreads them, to the checkpoint and the model of the run on its next save
        raise ValueError(
            f"{path}: {found} holds non-finite numbers (NaN or infinity), so the run cannot go on from "
            f"it; the run's model.npz and snapshots/ are left as they are (start a new run with "
            f"--init-policy from one of them)"
        )


def first_line(error: BaseException) -> str:
    """The first line of an error's message (its type where it has none), for a one-line refusal."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def export(net: PolicyNet, path: Path, meta: dict[str, Any]) -> Path:
    """The actor of ``net`` as the policy file ``agents.ppo`` plays (``meta``: the file's description), at ``path``."""
    return save_policy(path, net.policy_weights(meta))
