"""The masked policy's compiled CPU kernels (train.learning.fused_cpu) against the torch operations they replace:
values and gradients to float32 rounding, with masks of one to all legal actions a row."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from train.learning.fused_cpu import masked_policy_terms, sample_masked
from train.learning.policy_net import MASKED_LOGIT, sample_actions


def _torch_terms(logits: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor):
    masked = logits.masked_fill(~masks, MASKED_LOGIT)
    logp_all = torch.log_softmax(masked, dim=1)
    entropy = -(torch.softmax(masked, dim=1) * logp_all).sum(dim=1)
    return logp_all.gather(1, actions[:, None]).squeeze(1), entropy


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_masked_policy_terms_are_torchs_with_their_gradients(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows, width = 64, 117
    masks = rng.random((rows, width)) < rng.random((rows, 1))
    masks[np.arange(rows), rng.integers(0, width, rows)] = True  # at least one legal action a row
    masks[0] = False
    masks[0, 7] = True  # a row with one legal action: log-probability 0, entropy 0
    masks[1] = True  # every action legal
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    logits = torch.from_numpy(rng.normal(0, 3, (rows, width)).astype(np.float32)).requires_grad_()
    masks_t, actions_t = torch.from_numpy(masks), torch.from_numpy(actions)
    weights = torch.from_numpy(rng.normal(size=(2, rows)).astype(np.float32))
    logp, entropy = masked_policy_terms(logits, masks_t, actions_t)
    (weights[0] * logp + weights[1] * entropy).sum().backward()
    ref_logits = logits.detach().clone().requires_grad_()
    ref_logp, ref_entropy = _torch_terms(ref_logits, masks_t, actions_t)
    (weights[0] * ref_logp + weights[1] * ref_entropy).sum().backward()
    torch.testing.assert_close(logp, ref_logp, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(entropy, ref_entropy, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(logits.grad, ref_logits.grad, rtol=1e-5, atol=1e-5)
    assert logp[0] == 0 and entropy[0] == 0
    assert (logits.grad[~masks_t] == 0).all()  # an illegal action's logit gets no gradient


def test_sample_masked_draws_what_sample_actions_draws_from_the_same_uniforms() -> None:
    """The rollouts' compiled draw against torch's: the same generator state gives the same actions (away from a
    cumulative boundary, where rounding may differ), every action legal, and the log-probabilities of the torch
    path; an all-but-one-masked row draws its legal action, and a uniform at the top the last legal one."""
    rng = np.random.default_rng(5)
    rows, width = 400, 117
    masks = rng.random((rows, width)) < rng.random((rows, 1)) * 0.3
    masks[np.arange(rows), rng.integers(0, width, rows)] = True
    masks[0] = False
    masks[0, 3] = True
    logits = torch.from_numpy(rng.normal(0, 2, (rows, width)).astype(np.float32))
    legal = torch.from_numpy(masks)
    expected = sample_actions(logits.masked_fill(~legal, MASKED_LOGIT), legal, torch.Generator().manual_seed(11))
    uniforms = torch.rand((rows, 1), generator=torch.Generator().manual_seed(11))
    actions, logp = sample_masked(logits, legal, uniforms[:, 0])
    assert masks[np.arange(rows), actions].all()
    assert actions[0] == 3 and logp[0] == 0
    assert (actions == expected.numpy()).mean() > 0.99
    ref_logp = torch.log_softmax(logits.masked_fill(~legal, MASKED_LOGIT), dim=1)[np.arange(rows), actions]
    np.testing.assert_allclose(logp, ref_logp.numpy(), rtol=1e-5, atol=1e-5)
    top, _ = sample_masked(logits[1:2], legal[1:2], torch.tensor([np.nextafter(np.float32(1), np.float32(0))]))
    assert top[0] == np.flatnonzero(masks[1])[-1]
