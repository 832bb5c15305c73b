"""The pot bound (``bourre_env.limits``) in every env layer: ``reset`` refuses a larger pot, an episode whose pot
passes it ends truncated (AEC, single-agent and batched), rules whose payments could leave exact integers are
refused, and the bound is documented with its value."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import agents
import bourre_env
from bourre_env import bourre_v0 as env_module
from bourre_env import core, limits
from bourre_env.batch import BatchGame
from bourre_env.core.rules import Rules, presets
from bourre_env.single_agent import BourreSingleAgentEnv

ROOT = Path(__file__).resolve().parent.parent


def test_reset_refuses_a_pot_above_the_bound() -> None:
    env = bourre_env.raw_env(num_players=4)
    env.reset(seed=0, options={"pot": limits.POT_BOUND})
    assert env.state_vector[core.S_POT] == limits.POT_BOUND + 4  # the antes come on top
    for pot in (limits.POT_BOUND + 1, 2**63 - 1, -1, 1.0, True):
        with pytest.raises(ValueError, match="pot must be an integer in 0..1048576"):
            env.reset(seed=0, options={"pot": pot})


def test_aec_episode_is_truncated_when_the_pot_passes_the_bound() -> None:
    """Many deals of random play at 5 players: once wrapped negative near deal 64 (NaN in the observation). Now the
    episode ends truncated after the settlement that takes the pot past the bound, with the deal's rewards paid."""
    env = bourre_env.env(num_players=5, deals_per_episode=10_000)
    env.reset(seed=1)
    raw = env.unwrapped
    space = env.observation_space("player_0")["observation"]
    rng = np.random.default_rng(0)
    totals = dict.fromkeys(raw.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        assert space.contains(obs["observation"])
        totals[agent] += reward
        if terminated or truncated:
            assert not terminated and truncated
            assert info == {"truncation_reason": "pot_bound", "pot": int(raw.state_vector[core.S_POT])}
            env.step(None)
            continue
        assert 0 <= raw.state_vector[core.S_POT] <= limits.POT_BOUND + 5  # no deal starts above the bound
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    s = raw.state_vector
    assert s[core.S_POT] > limits.POT_BOUND and s[core.S_DEALS_DONE] < 10_000
    assert s[core.S_CHIPS : core.S_CHIPS + 5].sum() + s[core.S_POT] == 0  # chips conserved, nothing wrapped
    assert [totals[a] for a in raw.possible_agents] == s[core.S_CHIPS : core.S_CHIPS + 5].tolist()


def test_single_agent_view_reports_the_truncation() -> None:
    env = BourreSingleAgentEnv(opponents="random", agent_factory=agents.make, num_players=5, deals_per_episode=10_000)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(1)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        assert env.observation_space.contains(obs) and math.isfinite(reward)
    assert truncated and not terminated
    assert info["truncation_reason"] == limits.TRUNCATION_REASON and info["pot"] > limits.POT_BOUND
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_batch_rows_are_truncated_and_restarted() -> None:
    g = BatchGame(32, seed=2, num_players=5, deals_per_episode=10_000)
    rng = np.random.default_rng(3)
    seen = 0
    while seen < 3:
        rewards, done = g.step(np.array([rng.choice(np.flatnonzero(m)) for m in g.legal_masks()]))
        assert not (g.truncated & ~done).any()
        for b in np.flatnonzero(g.truncated):
            seen += 1
            assert g.states[b, core.S_DEALS_DONE] == 0 and g.states[b, core.S_POT] <= 5  # a new episode
            assert rewards[b].sum() != 0 and np.array_equal(rewards[b], np.round(rewards[b]))
        assert (g.states[:, core.S_POT] >= 0).all()


def test_batch_random_play_of_many_deals_never_overflows() -> None:
    """About 250 deals per row of compiled random play at 5 players: every pot stays in range, every observation
    finite (this is where the pot used to wrap round, near deal 64)."""
    g = BatchGame(16, seed=4, num_players=5, deals_per_episode=10**9)
    g.random_play(8_000)
    assert g.states[:, core.S_DEALS_DONE].max() < 100  # every row was truncated and restarted on the way
    pots = g.states[:, core.S_POT]
    assert (pots >= 0).all() and (pots <= limits.POT_BOUND + 5).all()
    assert np.isfinite(g.observations()).all()


def test_rules_that_could_leave_exact_integers_are_refused() -> None:
    refused = [
        ({"rake": Fraction(10**17 - 1, 10**17)}, "rake: .* is the fraction 99999999999999999/10"),
        ({"play_ante": 10**15}, "play_ante=1000000000000000"),
        ({"illegal_action": "renege", "renege_multiple": 10**12}, "renege_multiple=1000000000000"),
    ]
    for options, message in refused:
        for build in (bourre_env.env, lambda **o: BatchGame(1, **o), lambda **o: BourreSingleAgentEnv("random", **o)):
            with pytest.raises(ValueError, match=message):
                build(**options)
    bourre_env.env(rake=Fraction(1, 3))  # the exact third is fine
    assert Rules(rake=1 / 3).rake_fraction == Fraction(1, 3)  # and so is the float, read as the nearest simple fraction
    bourre_env.env(rake=1 / 3)
    bourre_env.env(rake=0.15, illegal_action="renege", renege_multiple=2)


@pytest.mark.parametrize("name", list(presets))
def test_the_bound_keeps_every_preset_exact(name: str) -> None:
    """What bourre_env.limits promises, for every published rule set at the largest table with reneges: one deal
    from a pot at the bound stays far from int64 overflow, and any single payment is exact in float32."""
    rules = presets[name].replace(num_players=8, illegal_action="renege")
    limits.check_rules(rules)
    antes = 8 * (1 + rules.play_ante + (rules.second_pass_ante or 0))
    stake = limits.POT_BOUND + antes
    assert stake * (1 + 8 * rules.renege_multiple) < 2**63 // 2**10
    assert 15 * stake + antes < 2**24  # a payment at renege_multiple 15: below the float32 limit of exact integers
    pot_entry = np.float32(np.arange(limits.POT_BOUND - 1000, limits.POT_BOUND + 1) / 100.0)
    assert len(np.unique(pot_entry)) == 1001  # every pot below the bound has its own observation value


def test_the_pot_bound_is_documented_with_its_value() -> None:
    doc = env_module.__doc__ or ""
    assert f"``POT_BOUND`` = 2**20 = {limits.POT_BOUND:,}" in " ".join(doc.split())
    assert limits.POT_BOUND == 2**20
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"{limits.POT_BOUND:,} chips" in readme
