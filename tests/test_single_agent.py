"""The Gymnasium single-agent view: the learner's rewards, observations and masks are those of the AEC env."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

import agents
import bourre_env
from agents.random_agent import RandomAgent
from bourre_env import single_agent
from bourre_env.observation import OBS_SIZE
from bourre_env.single_agent import BourreSingleAgentEnv


def _obs_dict(obs: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
    return {"observation": obs, "action_mask": mask.astype(np.int8)}


def _play_gym(env: BourreSingleAgentEnv, seed: int, learner: RandomAgent, seat: int) -> dict[str, list[Any]]:
    """One episode of the single-agent env; what the learner saw and got at each of its turns."""
    obs, info = env.reset(seed=seed, options={"learner_seat": seat})
    assert info["learner_seat"] == seat
    out: dict[str, list[Any]] = {"obs": [], "mask": [], "reward": [0.0]}
    terminated = False
    while not terminated:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any()
        out["obs"].append(obs)
        out["mask"].append(mask)
        obs, reward, terminated, truncated, _ = env.step(learner.act(_obs_dict(obs, mask)))
        assert not truncated
        out["reward"].append(reward)
    assert not env.action_masks().any()
    return out


def _play_aec(
    options: dict[str, Any], seed: int, learner: RandomAgent, seat: int, opponents: list[RandomAgent]
) -> dict[str, Any]:
    """The same episode through the PettingZoo AEC env: the learner's ``last()`` at each of its turns."""
    env = bourre_env.env(**options)
    env.reset(seed=seed)
    n = len(env.possible_agents)
    me = env.possible_agents[seat]
    out: dict[str, Any] = {"obs": [], "mask": [], "reward": [], "last_mover": None}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        q = env.possible_agents.index(agent)
        if agent == me:
            out["reward"].append(reward)
        if terminated or truncated:
            env.step(None)
            continue
        if agent == me:
            out["obs"].append(obs["observation"])
            out["mask"].append(obs["action_mask"].astype(bool))
            action = learner.act(obs)
        else:
            action = opponents[(q - seat) % n - 1].act(obs)
        out["last_mover"] = agent
        env.step(action)
    out["me"] = me
    return out


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 4},
        {"num_players": 3, "deals_per_episode": 3},
        {"num_players": 6, "deals_per_episode": 2, "pot_limit": 10},
    ],
)
def test_learner_sees_and_gets_what_the_aec_env_gives_its_seat(options: dict[str, Any]) -> None:
    n = options["num_players"]
    ended_on_opponent = nonzero = 0
    for seed in range(40):
        seat = seed % n
        opp_gym = [RandomAgent(1000 * seed + k) for k in range(n - 1)]
        opp_aec = [RandomAgent(1000 * seed + k) for k in range(n - 1)]
        env = BourreSingleAgentEnv(opp_gym, **options)
        got = _play_gym(env, seed, RandomAgent(seed), seat)
        want = _play_aec(options, seed, RandomAgent(seed), seat, opp_aec)
        assert got["reward"] == pytest.approx(want["reward"], abs=1e-9)
        assert len(got["obs"]) == len(want["obs"])
        for a, b in zip(got["obs"], want["obs"], strict=True):
            np.testing.assert_array_equal(a, b)
        for a, b in zip(got["mask"], want["mask"], strict=True):
            np.testing.assert_array_equal(a, b)
        nonzero += any(r != 0 for r in got["reward"])
        if want["last_mover"] != want["me"] and got["reward"][-1] != 0:
            ended_on_opponent += 1
    assert nonzero > 20
    assert ended_on_opponent > 0, "no episode ended on an opponent's move with a reward for the learner"


def test_multi_deal_episode_with_a_passed_deal() -> None:
    """Three deals; the learner always passes (when it may): the deals it sat out still pay it (its ante)."""

    def passer(obs: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(obs["action_mask"])
        return 52 if 52 in legal else int(legal[0])

    env = BourreSingleAgentEnv(RandomAgent(0), learner_seat=1, num_players=4, deals_per_episode=3)
    obs, _ = env.reset(seed=3)
    steps, total, terminated = 0, 0.0, False
    deal_numbers = set()
    while not terminated:
        deal_numbers.add(round(float(obs[1117]) * 10))
        obs, reward, terminated, _, _ = env.step(passer(_obs_dict(obs, env.action_masks())))
        total += reward
        steps += 1
    assert deal_numbers == {0, 1, 2}
    assert steps >= 3
    assert total == pytest.approx(float(env.aec.state_vector[bourre_env.core.S_CHIPS + 1]))


def test_seat_rotation_random_and_fixed() -> None:
    env = BourreSingleAgentEnv("random", agent_factory=agents.make, num_players=5)
    first = env.reset(seed=11)[1]["learner_seat"]
    seats = [first] + [env.reset()[1]["learner_seat"] for _ in range(9)]
    assert seats == [(first + i) % 5 for i in range(10)]
    assert env.reset(seed=11)[1]["learner_seat"] == first  # seeded resets are reproducible

    env = BourreSingleAgentEnv("random", agent_factory=agents.make, num_players=5, learner_seat="random")
    a = [env.reset(seed=5)[1]["learner_seat"]] + [env.reset()[1]["learner_seat"] for _ in range(30)]
    b = [env.reset(seed=5)[1]["learner_seat"]] + [env.reset()[1]["learner_seat"] for _ in range(30)]
    assert a == b and set(a) == set(range(5))

    env = BourreSingleAgentEnv(RandomAgent(0), num_players=3, learner_seat=2)
    assert {env.reset(seed=s)[1]["learner_seat"] for s in range(5)} == {2}
    with pytest.raises(ValueError):
        BourreSingleAgentEnv(RandomAgent(0), num_players=3, learner_seat=3)


def test_opponents_specs_callables_swap_and_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    # a spec is built by the installed factory (agents.make, declared as an entry point)
    assert [o.name for o in BourreSingleAgentEnv("heuristic", num_players=4).opponents] == ["heuristic"] * 3
    monkeypatch.setattr(single_agent, "installed_agent_factory", lambda: None)
    with pytest.raises(ValueError, match="agent_factory"):
        BourreSingleAgentEnv("heuristic", num_players=4)
    monkeypatch.undo()
    with pytest.raises(ValueError, match="1 or 3"):
        BourreSingleAgentEnv([RandomAgent(0), RandomAgent(1)], num_players=4)

    class Counting(RandomAgent):
        def __init__(self, seed: int) -> None:
            super().__init__(seed)
            self.acts = self.resets = 0

        def act(self, observation: dict[str, np.ndarray]) -> int:
            self.acts += 1
            return super().act(observation)

        def reset(self) -> None:
            self.resets += 1

    old = Counting(0)
    env = BourreSingleAgentEnv(old, num_players=4, deals_per_episode=3, learner_seat=0)
    learner = RandomAgent(7)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, done, _, _ = env.step(learner.act(_obs_dict(obs, env.action_masks())))
    assert old.resets == 9  # one shared object, reset once at each of the 3 deals of 3 episodes
    assert old.acts > 0

    calls = []

    def frozen(obs: dict[str, np.ndarray]) -> int:  # a callable policy, e.g. a frozen network
        calls.append(1)
        return int(np.flatnonzero(obs["action_mask"])[-1])

    env.set_opponents([frozen, frozen, RandomAgent(3)])
    acts_before = old.acts
    obs, _ = env.reset(seed=9)
    done = False
    while not done:
        obs, _, done, _, _ = env.step(learner.act(_obs_dict(obs, env.action_masks())))
    assert old.acts == acts_before and len(calls) > 0

    env = BourreSingleAgentEnv(
        ["heuristic", "random", "heuristic:tight"], agent_factory=agents.make, num_players=4, learner_seat=3
    )
    assert [o.name for o in env.opponents][1] == "random"
    env.reset(seed=0)


def test_illegal_action_raises_and_changes_nothing() -> None:
    env = BourreSingleAgentEnv(RandomAgent(0), num_players=4)
    obs, _ = env.reset(seed=2)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(ValueError, match="illegal"):
        env.step(illegal)
    np.testing.assert_array_equal(env._observe(), obs)
    env.step(int(np.flatnonzero(env.action_masks())[0]))


class _LegalActions(gymnasium.ActionWrapper):
    """Maps any action id to a legal one (``legal[a % len(legal)]``): check_env steps with unmasked samples."""

    def action(self, action: Any) -> int:
        legal = np.flatnonzero(self.env.unwrapped.action_masks())  # type: ignore[attr-defined]
        return int(legal[int(action) % legal.size])


def _first_legal(obs: dict[str, np.ndarray]) -> int:
    return int(np.flatnonzero(obs["action_mask"])[0])


def test_check_env() -> None:
    env = BourreSingleAgentEnv(_first_legal, num_players=4, deals_per_episode=2)
    with pytest.raises(ValueError, match="illegal"), warnings.catch_warnings():  # unmasked actions are rejected
        warnings.simplefilter("ignore")
        check_env(env, skip_render_check=True)
    # Every other check passes once actions are legal. The opponents must be deterministic for check_env's
    # step-determinism check: a seeded reset reseeds the deck and seat draws, not the opponents' generators.
    env = BourreSingleAgentEnv(_first_legal, num_players=4, deals_per_episode=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "wrapped env" and "Box maximum is infinity" (the pot fields are unbounded)
        check_env(_LegalActions(env), skip_render_check=True)
    assert isinstance(env.observation_space, spaces.Box) and env.observation_space.shape == (OBS_SIZE,)
    env = BourreSingleAgentEnv(RandomAgent(0), num_players=4, render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str)


def _make_env(seed: int) -> gymnasium.Env:
    return BourreSingleAgentEnv(RandomAgent(seed), num_players=4)


def test_subproc_vec_env() -> None:
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = SubprocVecEnv([functools.partial(_make_env, i) for i in range(2)])
    try:
        venv.seed(0)
        obs = venv.reset()
        assert obs.shape == (2, OBS_SIZE)
        rng = np.random.default_rng(0)
        dones = 0
        for _ in range(40):
            masks = np.stack(venv.env_method("action_masks"))
            assert masks.shape == (2, 117) and masks.any(axis=1).all()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rewards, done, _ = venv.step(actions)
            dones += int(done.sum())
        assert dones > 0
    finally:
        venv.close()


def test_maskable_ppo_smoke() -> None:
    from sb3_contrib import MaskablePPO

    env = BourreSingleAgentEnv("random", agent_factory=agents.make, num_players=4)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, policy_kwargs={"net_arch": [32]}, device="cpu"
    )
    model.learn(256)
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]
