"""``train.sb3.vec_env.BourreVecEnv``: SB3's VecEnv contract, masks for MaskablePPO, and a short training run."""

from __future__ import annotations

import json

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


def test_several_table_sizes_share_one_vec_env() -> None:
    venv = BourreVecEnv(10, num_players=(3, 5), opponents="random", agent_factory=make_batched)
    assert [e.num_envs for e in venv.envs] == [5, 5] and venv.sizes.tolist() == [3, 5] * 5
    venv.seed(0)
    obs = venv.reset()
    n_players = obs[:, observation.O_NUM_PLAYERS : observation.O_NUM_PLAYERS + 7].argmax(axis=1) + 2
    assert n_players.tolist() == venv.sizes.tolist()  # table k plays num_players[k % 2]
    assert [info["learner_seat"] < size for info, size in zip(venv.reset_infos, venv.sizes, strict=True)]
    for _ in range(30):
        masks = get_action_masks(venv)
        obs, _, dones, infos = venv.step(masks.argmax(axis=1))
        n_players = obs[:, observation.O_NUM_PLAYERS : observation.O_NUM_PLAYERS + 7].argmax(axis=1) + 2
        assert n_players.tolist() == venv.sizes.tolist()
        for i in np.flatnonzero(dones):
            final = infos[i]["terminal_observation"]
            assert final[observation.O_NUM_PLAYERS + venv.sizes[i] - 2] == 1.0
    with pytest.raises(ValueError, match="table sizes"):
        BourreVecEnv(1, num_players=(3, 5), opponents="random", agent_factory=make_batched)


def test_single_deals_draw_their_opponents_as_the_vector_env_does() -> None:
    # seating the opponents for the episode changes nothing where an episode is one deal
    from bourre_env.vector_env import BourreVectorEnv

    pool = ["heuristic", "random"]
    ours = BourreVecEnv(8, num_players=4, opponents=pool, opponent_weights=[0.5, 0.5], agent_factory=make_batched)
    theirs = BourreVectorEnv(8, pool, opponent_weights=[0.5, 0.5], agent_factory=make_batched, num_players=4)
    ours.seed(5)
    np.testing.assert_array_equal(ours.reset(), theirs.reset(seed=5)[0])
    for _ in range(60):
        actions = theirs.action_masks().argmax(axis=1)
        ours.step_async(actions)
        np.testing.assert_array_equal(ours.step_wait()[0], theirs.step(actions)[0])
        np.testing.assert_array_equal(ours.env._drawn, theirs._drawn)
    ours.close()
    theirs.close()


def test_pool_members_give_each_kind_its_weight() -> None:
    from train.learning.opponent_pool import PoolWeights
    from train.sb3.pool import pool_members

    fixed = ("h", "r")
    members, weights = pool_members(PoolWeights(0.5, 0.1, 0.4), fixed, [])  # type: ignore[arg-type]
    assert members == ["h", "r"] and weights == [0.9, 0.1]
    members, weights = pool_members(PoolWeights(0.5, 0.1, 0.4), fixed, ["s1", "s2"])  # type: ignore[list-item]
    assert members == ["h", "r", "s1", "s2"] and weights == pytest.approx([0.5, 0.1, 0.2, 0.2])


def test_the_sb3_trainer_runs_on_the_vector_env(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A few thousand MaskablePPO steps through ``train.sb3.trainer.run`` at two table sizes, with snapshots joining
    the pool, a checkpoint and a resume that goes on from its step count."""
    from train.sb3.trainer import Args, run

    args = Args(
        run_dir=tmp_path / "run",
        seed=2,
        players=(4, 5),
        num_envs=32,
        n_steps=16,
        batch_size=256,
        n_epochs=1,
        hidden=(16,),
        total_timesteps=2048,
        imitation_decisions=0,
        snapshot_every=512,
        max_snapshots=2,
        eval_every=0,
        checkpoint_every=1024,
        final_eval_deals=2,
        eval_players=(4,),
        eval_workers=1,
        progress=False,
    )
    run_dir = run(args)
    state = json.loads((run_dir / "state.json").read_text())
    assert state["num_timesteps"] == 2048 and len(state["snapshots"]) == 2
    assert (run_dir / "model.npz").is_file() and (run_dir / "checkpoint.zip").is_file()
    resumed = Args(run_dir=run_dir, resume=True, total_timesteps=3072)
    run(resumed, {"total_timesteps"})
    assert json.loads((run_dir / "state.json").read_text())["num_timesteps"] == 3072
