"""The MaskablePPO trainer's shared, sparse trunk: one network body for the actor and the critic.

SB3's default ``MlpPolicy`` gives the actor and the critic separate dense networks over the 1,174-float
observation. Most of the PPO update then goes to the two dense first layers (1,174 x 256 multiply-adds each,
forward and backward, per decision), although about 66 of those floats are nonzero at 5 players. ``SparseTrunk``
is an SB3 features extractor holding every hidden layer, shared by both heads (``net_arch`` empty for ``pi``
and ``vf``), as the batched trainer's ``train.learning.policy_net.PolicyNet`` is built: its first layer sums the
weight rows of the nonzero entries (``sparse_first_layer``, forward and backward), the rest are dense ReLU
layers. The actor it gives is the same kind of multilayer perceptron as before, so it exports to the
``agents.ppo`` format unchanged (``trunk_policy_layers``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch.nn import functional

from train.learning.policy_net import first_layer, sparse_batch_from_dense, sparse_first_layer

__all__ = ["TRUNKS", "SparseTrunk", "policy_kwargs", "trunk_policy_layers"]

TRUNKS = ("shared", "separate")
"""``shared``: ``SparseTrunk`` for both heads; ``separate``: SB3's two dense networks (runs made before
2026-11-26)."""


class SparseTrunk(BaseFeaturesExtractor):
    """Every hidden layer of the policy, shared by the actor and the critic; the first reads the observation
    sparsely (see the module docstring)."""

    def __init__(self, observation_space: gymnasium.spaces.Box, hidden: Sequence[int]) -> None:
        if not hidden or any(w < 1 for w in hidden):
            raise ValueError(f"hidden: positive layer widths, got {tuple(hidden)}")
        super().__init__(observation_space, features_dim=int(hidden[-1]))
        self.first_weight, self.first_bias = first_layer(int(np.prod(observation_space.shape)), int(hidden[0]))
        self.layers = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(hidden[:-1], hidden[1:], strict=True))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        batch = sparse_batch_from_dense(observations.flatten(1), grad=torch.is_grad_enabled())
        h = functional.relu(sparse_first_layer(self.first_weight, batch) + self.first_bias)
        for layer in self.layers:
            h = functional.relu(layer(h))
        return h


def policy_kwargs(trunk: str, hidden: Sequence[int], activation: type[torch.nn.Module]) -> dict[str, Any]:
    """``policy_kwargs`` of ``MaskablePPO("MlpPolicy", ...)`` for the trunk named ``trunk`` (one of ``TRUNKS``)."""
    if trunk == "shared":
        return {
            "features_extractor_class": SparseTrunk,
            "features_extractor_kwargs": {"hidden": tuple(hidden)},
            "share_features_extractor": True,
            "net_arch": {"pi": [], "vf": []},
            # SB3's Adam settings, with torch's fused step: one kernel for all the parameters instead of a few per
            # tensor
            "optimizer_kwargs": {"eps": 1e-5, "fused": True},
        }
    if trunk == "separate":
        return {"net_arch": {"pi": list(hidden), "vf": list(hidden)}, "activation_fn": activation}
    raise ValueError(f"trunk: one of {', '.join(TRUNKS)}, got {trunk!r}")


def trunk_policy_layers(policy: Any) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The actor's hidden layers of an SB3 policy built with ``policy_kwargs``, as ``(weight (out, in), bias)``."""
    layers: list[tuple[torch.Tensor, torch.Tensor]] = []
    extractor = policy.pi_features_extractor
    if isinstance(extractor, SparseTrunk):
        layers.append((extractor.first_weight.t(), extractor.first_bias))
        layers += [(m.weight, m.bias) for m in extractor_linears(extractor.layers)]
    layers += [(m.weight, m.bias) for m in extractor_linears(policy.mlp_extractor.policy_net)]
    return layers


def extractor_linears(modules: Any) -> list[torch.nn.Linear]:
    return [m for m in modules if isinstance(m, torch.nn.Linear)]
