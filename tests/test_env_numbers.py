"""Numbers given to the env from outside (issue 21): numpy integers, sizes past int64, calls out of turn. Each is
accepted as the number it holds or refused with a ValueError naming what is wrong, never an OverflowError or a
KeyError from deep inside."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from bourre_env.batch import BYTES_PER_ROW, BatchGame
from bourre_env.bourre_v0 import raw_env
from bourre_env.core.rules import Rules
from bourre_env.single_agent import BourreSingleAgentEnv

NUMPY_INTS = [np.int8, np.int16, np.uint8, np.int64, np.uint64]
INT_OPTIONS = {
    "num_players": 5,
    "hand_size": 5,
    "max_discard": 3,
    "pot_limit": 40,
    "deals_per_episode": 2,
    "max_discard_large_table": 2,
    "play_ante": 1,
    "second_pass_ante": 1,
    "renege_multiple": 2,
}


def single(**options: Any) -> BourreSingleAgentEnv:
    return BourreSingleAgentEnv("random", agent_factory=agents.make, **options)


@pytest.mark.parametrize("kind", NUMPY_INTS, ids=lambda t: t.__name__)
@pytest.mark.parametrize("option", sorted(INT_OPTIONS))
def test_numpy_integer_options_are_the_numbers_they_hold(option: str, kind: type) -> None:
    value = INT_OPTIONS[option]
    rules = Rules(**{option: kind(value)})
    assert getattr(rules, option) == value and type(getattr(rules, option)) is int
    assert rules == Rules(**{option: value})


@pytest.mark.parametrize(
    "make",
    [bourre_env.env, raw_env, single, lambda **kw: BatchGame(batch_size=2, **kw)],
    ids=["env", "raw_env", "single", "batch"],
)
@pytest.mark.parametrize("kind", [np.int8, np.int16, np.uint8], ids=lambda t: t.__name__)
def test_every_entry_point_takes_a_narrow_numpy_player_count(make: Any, kind: type) -> None:
    made = make(num_players=kind(5))
    env = getattr(made, "aec", made)  # the single-agent env's AEC env
    rules = getattr(env, "unwrapped", env).rules
    assert rules.num_players == 5 and type(rules.num_players) is int


@pytest.mark.parametrize(
    "option", ["pot_limit", "deals_per_episode", "play_ante", "second_pass_ante", "renege_multiple"]
)
@pytest.mark.parametrize("value", [2**63, np.uint64(2**64 - 1)], ids=["2**63", "uint64_max"])
def test_options_past_int64_are_refused_by_name(option: str, value: Any) -> None:
    with pytest.raises(ValueError, match=rf"^{option}: expected"):
        bourre_env.env(**{option: value})


@pytest.mark.parametrize("action", [2**63, np.uint64(2**64 - 1), -1, 10**30])
@pytest.mark.parametrize("illegal_action", ["error", "renege"])
def test_an_action_out_of_range_is_refused_by_name(action: Any, illegal_action: str) -> None:
    for env in (
        raw_env(num_players=3, illegal_action=illegal_action),
        bourre_env.env(num_players=3, illegal_action=illegal_action),
    ):
        env.reset(seed=1)
        before = env.unwrapped.state_vector.copy()
        with pytest.raises(ValueError, match=r"action: expected an action id in 0\.\.\d+ for player_\d"):
            env.step(action)
        assert (env.unwrapped.state_vector == before).all()


def finish(env: Any) -> None:
    while env.agents:
        observation, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else int(np.flatnonzero(observation["action_mask"])[0]))


def test_after_the_episode_step_and_last_say_so() -> None:
    env = raw_env(num_players=3, deals_per_episode=1)
    env.reset(seed=2)
    finish(env)
    for call in (lambda: env.step(52), lambda: env.step(None), lambda: env.last()):
        with pytest.raises(ValueError, match="the episode is over.*call reset"):
            call()
    env.reset(seed=3)  # and a new episode starts as usual
    assert env.agents and env.last()[0] is not None


def test_the_wrapped_env_after_the_episode() -> None:
    """PettingZoo's order-enforcing wrapper answers a step after the episode with a warning, as for every
    PettingZoo env; ``last`` says the episode is over instead of a KeyError for the last agent."""
    env = bourre_env.env(num_players=3, deals_per_episode=1)
    env.reset(seed=2)
    finish(env)
    with pytest.raises(ValueError, match="the episode is over"):
        env.last()


def test_legal_actions_before_reset_is_refused() -> None:
    env = raw_env(num_players=4)
    with pytest.raises(ValueError, match=r"call reset\(\) first"):
        env.legal_actions()
    with pytest.raises(ValueError, match=r"call reset\(\) first"):
        env.step(52)
    env.reset(seed=0)
    assert env.legal_actions()


@pytest.mark.parametrize("seed", [np.int8(127), np.uint8(255)], ids=["int8", "uint8"])
def test_single_agent_opponent_seed(seed: Any) -> None:
    env = single(num_players=4, opponent_seed=seed)
    env.reset(seed=0)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="opponent_seed"):
            single(num_players=4, opponent_seed=bad)


@pytest.mark.parametrize("action", [2**63, np.uint64(2**64 - 1)], ids=["2**63", "uint64_max"])
def test_single_agent_step_out_of_range(action: Any) -> None:
    env = single(num_players=4)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action: expected an action id"):
        env.step(action)


def test_a_batch_too_large_for_memory_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^batch_size 10000000000000 needs about .* of memory"):
        BatchGame(batch_size=10**13, num_players=5)
    assert BYTES_PER_ROW > 8  # each row takes at least its state
