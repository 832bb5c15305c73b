"""The MaskablePPO trainer's shared, sparse trunk (``train.sb3.trunk``): the sparse first layer is the dense one,
forward and backward; the exported actor is the SB3 policy's; runs made before it keep their network."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.ppo import forward_rows as policy_forward_rows
from agents.ppo import load_policy, pack_layers
from train.learning import policy_net
from train.learning.policy_net import sparse_batch_from_dense, sparse_first_layer
from train.sb3.glue import export_policy
from train.sb3.trainer import Args, build_model, make_vec_env, resolve_resume


def sparse_observations(rows: int, width: int, seed: int) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    obs = np.where(rng.random((rows, width)) < 0.08, rng.normal(size=(rows, width)), 0.0).astype(np.float32)
    obs[3] = 0.0  # a row with no entry at all
    obs[:, 5] = 0.0  # a column no row uses
    return torch.from_numpy(obs)


@pytest.mark.parametrize("compiled", [True, False], ids=["cpu-scan", "torch-ops"])
def test_the_sparse_first_layer_is_the_dense_product_forward_and_backward(compiled: bool) -> None:
    obs = sparse_observations(37, 90, seed=1)
    # the compiled scan serves CPU tensors, torch's own operations any other device
    to_batch = sparse_batch_from_dense if compiled else policy_net._sparse_batch_torch
    weight = torch.randn(90, 16, requires_grad=True)
    batch = to_batch(obs, grad=True)
    out = sparse_first_layer(weight, batch)
    upstream = torch.randn(37, 16)
    (out * upstream).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), (obs @ weight).detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(weight.grad.numpy(), (obs.t() @ upstream).numpy(), rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        plain = to_batch(obs, grad=False)
        assert plain.t_rows is None
        np.testing.assert_allclose(sparse_first_layer(weight, plain).numpy(), out.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("trunk", ["shared", "separate"])
def test_the_exported_policy_plays_the_sb3_actor(trunk: str, tmp_path: Path) -> None:
    args = Args(players=(5,), num_envs=16, n_steps=16, batch_size=64, n_epochs=1, hidden=(32, 24), trunk=trunk)
    env = make_vec_env(args)
    try:
        model = build_model(args, env, tmp_path)
        model.learn(512)  # weights moved away from their initial values
        weights = load_policy(export_policy(model, tmp_path / "model.npz", {}))
        assert [w.shape for w, _ in weights.hidden] == [(32, 1174), (24, 32)]
        obs = env.reset().astype(np.float32)
        masks = np.stack(env.env_method("action_masks"))
    finally:
        env.close()
    packed = pack_layers([*weights.hidden, weights.action], weights.activation)
    logits = np.empty((obs.shape[0], weights.action[0].shape[0]), np.float32)
    policy_forward_rows(packed.weights, packed.biases, packed.tanh, obs, logits)
    with torch.no_grad():
        sb3 = model.policy.get_distribution(torch.from_numpy(obs), action_masks=masks).distribution.probs.numpy()
    ours = np.where(masks, np.exp(logits - logits.max(axis=1, keepdims=True)), 0.0)
    np.testing.assert_allclose(ours / ours.sum(axis=1, keepdims=True), sb3, atol=1e-5)
    shared = [name for name, _ in model.policy.named_parameters() if name.startswith("features_extractor.")]
    assert bool(shared) == (trunk == "shared")  # one trunk read by both heads, or none


def test_runs_made_before_the_shared_trunk_keep_their_network(tmp_path: Path) -> None:
    # an args.json written before the field existed
    saved = {k: v for k, v in json.loads(json.dumps(Args(hidden=(8,)).to_json())).items() if k != "trunk"}
    assert Args.from_json(saved).trunk == "separate"
    assert Args.from_json({**saved, "trunk": "shared"}).trunk == "shared"
    with pytest.raises(ValueError, match="trunk: one of shared, separate, got 'wide'"):
        Args.from_json({**saved, "trunk": "wide"})
    (tmp_path / "args.json").write_text(json.dumps({**saved, "run_dir": str(tmp_path)}))
    (tmp_path / "checkpoint.zip").write_bytes(b"")
    assert resolve_resume(Args(run_dir=tmp_path, resume=True), set()).trunk == "separate"
    with pytest.raises(ValueError, match="--trunk shared: the run in .* has a separate trunk"):
        resolve_resume(Args(run_dir=tmp_path, resume=True, trunk="shared"), {"trunk"})
