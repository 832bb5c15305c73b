"""The learned agent: the shipped model loads and plays legal moves; policy files are checked on load."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agents
import bourre_env
from agents.ppo import SHIPPED_MODEL, PolicyWeights, load_policy, save_policy
from bourre_env.core import NUM_ACTIONS
from bourre_env.core.rules import presets
from bourre_env.observation import OBS_SIZE, VERSION_SIZES


def tiny_policy(seed: int = 0, width: int = 16, obs_size: int = OBS_SIZE) -> PolicyWeights:
    rng = np.random.default_rng(seed)
    hidden = ((rng.normal(size=(width, obs_size)).astype(np.float32), np.zeros(width, np.float32)),)
    action = (rng.normal(size=(NUM_ACTIONS, width)).astype(np.float32), np.zeros(NUM_ACTIONS, np.float32))
    return PolicyWeights(hidden, action, "relu", {"note": "test"})


def play_deals(table: list, players: int, deals: int, seed: int, rules: str = "standard") -> int:
    """Plays ``deals`` deals (the env raises on any illegal action); returns the decisions made."""
    env = bourre_env.env(num_players=players, rules=rules)
    decisions = 0
    for k in range(deals):
        env.reset(seed=seed + k)
        for name in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            action = None
            if not (terminated or truncated):
                action = table[env.unwrapped.agent_name_mapping[name]].act(obs)
                assert obs["action_mask"][action] == 1
                decisions += 1
            env.step(action)
    return decisions


def test_shipped_model_is_committed_and_small() -> None:
    assert SHIPPED_MODEL.is_file(), "agents/models/ppo.npz is the shipped model"
    assert SHIPPED_MODEL.stat().st_size < 5_000_000
    meta = load_policy(SHIPPED_MODEL).meta
    assert "command" in meta and "seed" in meta  # how to reproduce it travels with it


@pytest.mark.parametrize("players", [3, 5, 7])
def test_shipped_agent_plays_legal_moves_only(players: int) -> None:
    table = [agents.make("ppo", seed=s) if s % 2 == 0 else agents.make("heuristic", seed=s) for s in range(players)]
    assert play_deals(table, players, deals=15, seed=players) > 0


@pytest.mark.parametrize("preset", sorted(presets))
def test_learned_and_heuristic_agents_play_every_preset_legally(preset: str) -> None:
    for players in (4, 7):
        table = [agents.make("ppo", seed=s) if s % 2 else agents.make("heuristic", seed=s) for s in range(players)]
        assert play_deals(table, players, deals=8, seed=players, rules=preset) > 0


def test_policy_file_round_trip_and_load_by_path(tmp_path: Path) -> None:
    weights = tiny_policy()
    path = save_policy(tmp_path / "p", weights)
    assert path.suffix == ".npz"
    loaded = load_policy(path)
    obs = np.random.default_rng(1).random(OBS_SIZE).astype(np.float32)
    np.testing.assert_allclose(loaded.logits(obs), weights.logits(obs), rtol=1e-6)
    agent = agents.make(f"ppo:{path}", seed=3)
    assert play_deals([agent] * 4, 4, deals=3, seed=0) > 0
    sampler = agents.PPOAgent(path, seed=5, sample=True)
    assert play_deals([sampler] * 4, 4, deals=3, seed=0) > 0


def test_older_observation_version_reads_its_prefix(tmp_path: Path) -> None:
    """A version-1 policy sees only the first 1145 entries; later fields cannot move it."""
    assert load_policy(SHIPPED_MODEL).obs_size == OBS_SIZE == VERSION_SIZES[2]
    assert VERSION_SIZES[1] == 1145
    weights = load_policy(save_policy(tmp_path / "v1", tiny_policy(obs_size=VERSION_SIZES[1])))
    assert weights.meta["obs_size"] == 1145
    obs = np.random.default_rng(1).random((3, OBS_SIZE)).astype(np.float32)
    changed = obs.copy()
    changed[:, VERSION_SIZES[1] :] += 1.0
    np.testing.assert_array_equal(weights.logits(obs), weights.logits(changed))
    assert not np.array_equal(weights.logits(obs), weights.logits(changed[:, ::-1]))
    assert play_deals([agents.PPOAgent(weights)] * 4, 4, deals=2, seed=0, rules="four_card") > 0
    with pytest.raises(ValueError, match="reads 1000 observation entries"):
        save_policy(tmp_path / "odd", tiny_policy(obs_size=1000))


def test_argmax_is_the_most_probable_legal_action(tmp_path: Path) -> None:
    weights = tiny_policy(seed=2)
    agent = agents.PPOAgent(weights)
    env = bourre_env.env(num_players=5)
    env.reset(seed=4)
    obs = env.observe(env.agent_selection)
    logits = weights.logits(obs["observation"])
    legal = np.flatnonzero(obs["action_mask"])
    assert agent.act(obs) == legal[np.argmax(logits[legal])]


def _write_npz(path: Path, meta: object, **arrays: np.ndarray) -> Path:
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)
    return path


def test_bad_files_give_clear_errors(tmp_path: Path) -> None:
    good = save_policy(tmp_path / "good.npz", tiny_policy())
    good_arrays = dict(np.load(good, allow_pickle=False))
    meta = json.loads(str(good_arrays.pop("meta")))

    with pytest.raises(ValueError, match="no such policy file"):
        load_policy(tmp_path / "missing.npz")
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"PK\x03\x04 this is not a zip archive")
    with pytest.raises(ValueError, match="not a readable"):
        load_policy(corrupt)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[:200])
    with pytest.raises(ValueError, match="truncated.npz"):
        load_policy(truncated)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, meta=np.array([{"format": "bourre-ppo-policy"}], dtype=object))
    with pytest.raises(ValueError, match="pickled.npz"):  # object arrays are never unpickled
        load_policy(pickled)
    with pytest.raises(ValueError, match="meta format"):
        load_policy(_write_npz(tmp_path / "other.npz", {**meta, "format": "something-else"}, **good_arrays))
    with pytest.raises(ValueError, match="observations of 10"):
        load_policy(_write_npz(tmp_path / "obs.npz", {**meta, "obs_size": 10}, **good_arrays))
    wrong = {**good_arrays, "layers.0.weight": good_arrays["layers.0.weight"][:, :100]}
    with pytest.raises(ValueError, match="layer 0 takes 100 inputs"):
        load_policy(_write_npz(tmp_path / "shape.npz", meta, **wrong))
    no_action = {k: v for k, v in good_arrays.items() if not k.startswith("action")}
    with pytest.raises(ValueError, match="missing action.weight"):
        load_policy(_write_npz(tmp_path / "noaction.npz", meta, **no_action))
    nan = {**good_arrays, "action.bias": np.full(NUM_ACTIONS, np.nan, np.float32)}
    with pytest.raises(ValueError, match="non-finite"):
        load_policy(_write_npz(tmp_path / "nan.npz", meta, **nan))
    with pytest.raises(ValueError, match="no such policy file"):
        agents.make(f"ppo:{tmp_path / 'nope.npz'}")


def test_a_policy_file_is_read_again_once_rewritten(tmp_path: Path) -> None:
    """agents.make shares one checked read of a file per process, read-only, until the file changes."""
    from agents.ppo import cached_policy

    path = save_policy(tmp_path / "p.npz", tiny_policy(seed=1))
    first, second = agents.make(f"ppo:{path}", seed=0), agents.make(f"ppo:{path}", seed=1)
    assert first.policy.action[0] is second.policy.action[0]
    assert not first.policy.action[0].flags.writeable
    save_policy(path, tiny_policy(seed=2))  # a new file in its place
    obs = np.random.default_rng(1).random(OBS_SIZE).astype(np.float32)
    np.testing.assert_allclose(cached_policy(path).logits(obs), tiny_policy(seed=2).logits(obs), rtol=1e-6)
    with pytest.raises(ValueError, match="bourre train"):
        agents.make(f"ppo:{tmp_path / 'missing.npz'}")
