"""``gymnasium.make`` knows the single-agent env, and Gymnasium's own checker passes on it (docs/environment.md)."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import bourre_env
from bourre_env.single_agent import ENV_ID, BourreSingleAgentEnv


def test_gymnasium_make_builds_the_single_agent_env_with_heuristic_opponents() -> None:
    env = gymnasium.make(ENV_ID, num_players=4)
    assert isinstance(env.unwrapped, BourreSingleAgentEnv)
    assert [o.name for o in env.unwrapped.opponents] == ["heuristic"] * 3
    obs, info = env.reset(seed=3)
    assert obs.shape == (bourre_env.observation.OBS_SIZE,) and info["learner_seat"] in range(4)
    mask = env.unwrapped.action_masks()
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[0]))
    assert isinstance(reward, float)
    other = gymnasium.make(ENV_ID, opponents="random", num_players=3)
    assert [o.name for o in other.unwrapped.opponents] == ["random"] * 2


def test_importing_the_package_twice_registers_once() -> None:
    import importlib

    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("error")
        importlib.reload(bourre_env)
    assert ENV_ID in gymnasium.registry


def test_gymnasiums_checker_passes_with_random_substitution() -> None:
    env = BourreSingleAgentEnv(opponents="heuristic", num_players=5, on_illegal="random")
    check_env(env, skip_render_check=True)


def test_gymnasiums_checker_finds_the_observation_space_bounded() -> None:
    """The space's bounds are the observation's own (``limits.observation_bounds``), finite: the checker's "maximum
    value is infinity" warning is an error here."""
    env = BourreSingleAgentEnv(opponents="heuristic", num_players=4, on_illegal="random")
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("error")
        check_env(env, skip_render_check=True)
    space = env.observation_space
    assert isinstance(space, gymnasium.spaces.Box) and np.isfinite(space.high).all() and (space.low == 0).all()


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 5},
        {"num_players": 3, "deals_per_episode": 30, "play_ante": 3, "pot_limit": 500},
        {"num_players": 4, "deals_per_episode": 12, "illegal_action": "renege", "renege_multiple": 15},
        {"rules": "four_card", "num_players": 6, "deals_per_episode": 8},
    ],
)
def test_every_observation_lies_in_the_space_under_the_rules(options: dict[str, Any]) -> None:
    """Random play of many deals, the pot growing as bourrés and reneges carry it: every observation of every seat
    lies within the AEC env's space, and the vector env's space is the same."""
    env = bourre_env.env(**options)
    space = env.observation_space("player_0")["observation"]
    rng = np.random.default_rng(5)
    seen = 0
    for episode in range(6):
        env.reset(seed=episode)
        for name in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            assert space.contains(obs["observation"]), (name, options)
            seen += 1
            env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert seen > 100
    from agents.batched_players import make_batched

    vector = bourre_env.BourreVectorEnv(2, "random", agent_factory=make_batched, **options)
    assert np.array_equal(vector.single_observation_space.high, space.high)


def test_the_checker_fails_on_the_default_which_raises() -> None:
    env = BourreSingleAgentEnv(opponents="random", num_players=5)
    env.action_space.seed(0)  # unseeded, a legal draw that ended the deal made the next step fail otherwise
    with pytest.raises(ValueError, match="illegal action"):
        env.reset(seed=0)
        for _ in range(50):  # the sampled actions are rarely legal: one of them raises
            _, _, terminated, truncated, _ = env.step(int(env.action_space.sample()))
            if terminated or truncated:
                env.reset()


def test_an_illegal_action_is_replaced_by_a_legal_one_and_reported() -> None:
    env = BourreSingleAgentEnv(opponents="random", num_players=3, on_illegal="random")
    env.reset(seed=1)
    mask = env.action_masks()
    illegal = int(np.flatnonzero(~mask)[0])
    _, _, _, _, info = env.step(illegal)
    assert info["illegal_action"] == illegal
    env.reset(seed=1)
    _, _, _, _, info = env.step(int(np.flatnonzero(mask)[0]))
    assert "illegal_action" not in info
    for bad in (52.5, "3", True):
        env.reset(seed=1)
        with pytest.raises(ValueError, match="action must be an action id"):
            env.step(bad)


def test_runs_with_random_substitution_are_reproducible() -> None:
    def play(seed: int) -> list[Any]:
        env = BourreSingleAgentEnv(opponents="random", num_players=4, on_illegal="random")
        env.reset(seed=seed)
        out = []
        for k in range(30):
            obs, reward, terminated, truncated, info = env.step(k % 117)
            out.append((reward, info.get("illegal_action"), float(obs.sum())))
            if terminated or truncated:
                env.reset()
        return out

    assert play(5) == play(5)


def test_a_bad_on_illegal_is_refused() -> None:
    with pytest.raises(ValueError, match="on_illegal: expected one of"):
        BourreSingleAgentEnv(opponents="random", num_players=3, on_illegal="ignore")
