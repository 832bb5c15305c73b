"""``train.sb3.vec_env.BourreVecEnv``: SB3's VecEnv contract, masks for MaskablePPO, and a short training run."""

from __future__ import annotations

import numpy as np
import pytest
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks

from agents.batched_players import make_batched
from bourre_env import core, limits, observation
from train.sb3.vec_env import BourreVecEnv


def test_vec_env_contract_and_masks() -> None:
    venv = BourreVecEnv(8, num_players=4, opponents="heuristic", agent_factory=make_batched)
    venv.seed(3)
    obs = venv.reset()
    assert obs.shape == (8, observation.OBS_SIZE) and len(venv.reset_infos) == 8
    venv.seed(3)
    np.testing.assert_array_equal(venv.reset(), obs)  # seeded through SB3's seed()
    endings = 0
    for _ in range(60):
        masks = get_action_masks(venv)
        assert masks.shape == (8, core.NUM_ACTIONS) and masks.any(axis=1).all()
        obs, rewards, dones, infos = venv.step(masks.argmax(axis=1))
        assert rewards.shape == dones.shape == (8,) and len(infos) == 8
        for i in np.flatnonzero(dones):
            endings += 1
            assert infos[i]["terminal_observation"].shape == (observation.OBS_SIZE,)
            assert infos[i]["TimeLimit.truncated"] is False and infos[i]["episode"]["l"] >= 1
    assert endings > 0
    with pytest.raises(AttributeError):
        venv.env_method("render")


def test_truncation_marks_time_limit() -> None:
    venv = BourreVecEnv(32, num_players=4, deals_per_episode=5, opponents="random", agent_factory=make_batched)
    venv.reset()
    venv.env.game.states[:, core.S_POT] += limits.POT_BOUND
    rng = np.random.default_rng(0)
    truncated = 0
    for _ in range(60):
        masks = get_action_masks(venv)
        _, _, dones, infos = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        truncated += sum(infos[i]["TimeLimit.truncated"] for i in np.flatnonzero(dones))
    assert truncated > 0


def test_maskable_ppo_trains_on_it() -> None:
    venv = BourreVecEnv(64, num_players=5, opponents="heuristic", agent_factory=make_batched, reward_scale=0.1)
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=32,
        batch_size=256,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [32]},
    )
    model.learn(total_timesteps=4096)
    assert model.num_timesteps >= 4096
    obs = venv.reset()
    actions, _ = model.predict(obs, action_masks=get_action_masks(venv), deterministic=True)
    assert get_action_masks(venv)[np.arange(64), actions].all()
