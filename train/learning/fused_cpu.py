"""Compiled CPU kernels for the batched trainer's masked policy: each replaces a chain of torch operations over
all 117 actions of every row by one pass over each row's legal actions (about 10 at 5 players).

``sample_masked(logits, masks, uniforms)``
    The rollouts' draw: one action a row from the softmax of the legal logits by inverting its cumulative
    distribution with the row's uniform, and its log-probability (torch: ``policy_net.sample_actions`` and a
    log-softmax of all 117 entries).
``masked_policy_terms(logits, masks, actions)``
    The update's terms: each row's log-probability of its action and its entropy under the softmax of the legal
    logits, with their gradient (torch: a mask, a log-softmax, a softmax, a product and a gather, each over all
    117 entries, and their backward passes).

Both compute what the torch operations they replace compute, to float32 rounding (``tests/test_fused_cpu.py``
holds them to the torch path, values and gradients); they run on the CPU in one thread, and other devices keep
the torch path (``train.ppo.rollout.Collector``, ``train.ppo.trainer.policy_terms``).
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
import torch
from numba import njit

__all__ = ["masked_policy_terms", "sample_masked"]


# ---------------------------------------------------------------------------- the masked policy's terms
@njit(cache=True, inline="always")
def _legal_entries(legal: np.ndarray, out: np.ndarray) -> int:
    count = 0
    for j in range(legal.shape[0]):
        out[count] = j
        count += legal[j]  # written always, kept when legal: no branch in the scan
    return count


@njit(cache=True)
def _policy_terms_forward(
    logits: np.ndarray,
    masks: np.ndarray,
    actions: np.ndarray,
    logp_action: np.ndarray,
    entropy: np.ndarray,
    probs: np.ndarray,
) -> None:
    n, width = logits.shape
    legal = np.empty(width, np.int64)
    for i in range(n):
        z, p = logits[i], probs[i]
        count = _legal_entries(masks[i], legal)
        top = -np.inf
        for q in range(count):
            top = max(top, z[legal[q]])
        total = 0.0
        for q in range(count):
            total += math.exp(z[legal[q]] - top)
        lse = top + math.log(total)
        p[:] = 0.0
        h = 0.0
        for q in range(count):
            j = legal[q]
            logp = z[j] - lse
            pj = math.exp(logp)
            p[j] = pj
            h -= pj * logp
        entropy[i] = h
        logp_action[i] = z[actions[i]] - lse


@njit(cache=True)
def _policy_terms_backward(
    logits: np.ndarray,
    probs: np.ndarray,
    actions: np.ndarray,
    logp_action: np.ndarray,
    entropy: np.ndarray,
    logp_grad: np.ndarray,
    entropy_grad: np.ndarray,
    out: np.ndarray,
) -> None:
    # d logp[a] / dz_j = [j == a] - p_j; d H / dz_j = -p_j (log p_j + H), with log p_j = z_j - z_a + logp[a]; an
    # illegal entry has p_j = 0: no gradient
    n, width = logits.shape
    for i in range(n):
        z, p, o = logits[i], probs[i], out[i]
        a = actions[i]
        shift = logp_action[i] - z[a] + entropy[i]
        ga, gh = logp_grad[i], entropy_grad[i]
        for j in range(width):
            o[j] = -p[j] * (ga + gh * (z[j] + shift))
        o[a] += ga


class _MaskedPolicyTerms(torch.autograd.Function):
    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any, logits: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        z = logits.detach().contiguous()
        n = z.shape[0]
        logp_action, entropy = torch.empty(n, dtype=torch.float32), torch.empty(n, dtype=torch.float32)
        probs = torch.empty_like(z)
        taken = actions.contiguous()
        _policy_terms_forward(
            z.numpy(), masks.contiguous().numpy(), taken.numpy(), logp_action.numpy(), entropy.numpy(), probs.numpy()
        )
        ctx.save_for_backward(z, probs, taken, logp_action, entropy)
        return logp_action, entropy

    @staticmethod
    def backward(ctx: Any, logp_grad: torch.Tensor, entropy_grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        z, probs, taken, logp_action, entropy = ctx.saved_tensors
        out = torch.empty_like(z)
        _policy_terms_backward(
            z.numpy(),
            probs.numpy(),
            taken.numpy(),
            logp_action.numpy(),
            entropy.numpy(),
            logp_grad.contiguous().numpy(),
            entropy_grad.contiguous().numpy(),
            out.numpy(),
        )
        return out, None, None


def masked_policy_terms(
    logits: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row, the log-probability of ``actions`` and the entropy of the softmax over the legal entries of
    ``logits`` (``masks`` True); CPU tensors: float32 ``(rows, actions)`` logits, bool masks, int64 actions, each
    action legal. Differentiable in ``logits``."""
    return cast(tuple[torch.Tensor, torch.Tensor], _MaskedPolicyTerms.apply(logits, masks, actions))


# ---------------------------------------------------------------------------- the rollouts' draw
@njit(cache=True)
def _sample_masked(
    logits: np.ndarray, masks: np.ndarray, uniforms: np.ndarray, actions: np.ndarray, logp_action: np.ndarray
) -> None:
    n, width = logits.shape
    for i in range(n):
        z, legal = logits[i], masks[i]
        top = -np.inf
        last = -1
        for j in range(width):
            if legal[j]:
                last = j
                if z[j] > top:
                    top = z[j]
        total = 0.0
        for j in range(width):
            if legal[j]:
                total += math.exp(z[j] - top)
        lse = top + math.log(total)
        # the first legal action whose cumulative probability passes the uniform; rounding can leave the sum short
        # of it, and then the last legal action
        target = uniforms[i] * total
        chosen = last
        cumulative = 0.0
        for j in range(width):
            if legal[j]:
                cumulative += math.exp(z[j] - top)
                if cumulative > target:
                    chosen = j
                    break
        actions[i] = chosen
        logp_action[i] = z[chosen] - lse


def sample_masked(logits: torch.Tensor, masks: torch.Tensor, uniforms: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """One action per row from the softmax of the legal entries of ``logits`` (``masks`` True, at least one a row),
    drawn by inverting the cumulative distribution with the row's uniform in [0, 1), and its log-probability;
    CPU tensors, as numpy arrays (int64 actions, float32 log-probabilities)."""
    n = logits.shape[0]
    actions = np.empty(n, np.int64)
    logp = np.empty(n, np.float32)
    _sample_masked(
        logits.detach().contiguous().numpy(),
        masks.contiguous().numpy(),
        uniforms.detach().contiguous().numpy(),
        actions,
        logp,
    )
    return actions, logp
