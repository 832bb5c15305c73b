"""The search's confidence gate (``pimc``'s ``z`` option): the rollout policy's own action unless a candidate beats
it by more than ``z`` paired standard errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
import bourre_env
from agents.search.pimc import PIMCAgent, choose
from bourre_env import core


def test_without_a_default_the_first_best_mean_is_played() -> None:
    gains = np.array([[0.0, 2.0], [1.0, 1.0], [2.0, 0.0]])
    assert choose([7, 8, 9], gains, None, 0.0) == 7  # all tie at 1.0: the first
    assert choose([7, 8, 9], gains + np.array([[0.0], [0.5], [0.0]]), None, 5.0) == 8


def test_the_default_stays_unless_the_paired_gain_is_confident() -> None:
    rng = np.random.default_rng(0)
    noise = rng.normal(0.0, 3.0, size=64)
    default_row = noise
    slightly_better = noise + 0.05 + rng.normal(0.0, 1.0, size=64)  # about 0.4 standard errors above
    assert choose([10, 11], np.stack([default_row, slightly_better]), 0, 2.0) == 10
    assert choose([10, 11], np.stack([default_row, slightly_better]), 0, 0.0) == 11 or slightly_better.mean() <= 0
    clearly_better = noise + 1.0 + rng.normal(0.0, 0.1, size=64)  # the same worlds, a chip more in each
    assert choose([10, 11], np.stack([default_row, clearly_better]), 0, 2.0) == 11
    # the pairing is what makes it confident: unpaired, the noise of the worlds (sd 3) would hide one chip
    diff = clearly_better - default_row
    assert diff.mean() / (diff.std(ddof=1) / math.sqrt(64)) > 2.0


def test_a_tie_in_every_world_goes_to_the_default() -> None:
    gains = np.array([[1.0, -2.0, 3.0], [1.0, -2.0, 3.0]])
    assert choose([4, 5], gains, 1, 2.0) == 5
    assert choose([4, 5], gains, 0, 2.0) == 4
    sure = np.array([[1.0, -2.0, 3.0], [1.5, -1.5, 3.5]])  # half a chip better in every world: zero spread
    assert choose([4, 5], sure, 0, 100.0) == 5


@pytest.mark.parametrize("spec", ["pimc:8,z=-1", "pimc:8,z=nan", "pimc:8,z=inf"])
def test_a_bad_gate_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="z"):
        agents.make(spec)


def test_a_gated_draw_searches_the_policy_own_draw() -> None:
    agent = PIMCAgent(worlds=4, rollout="ppo", z=2.0, draws=1)
    env = bourre_env.env(num_players=5)
    seen = 0
    for seed in range(40):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            mask = obs["action_mask"]
            stays = [a for a in np.flatnonzero(mask) if a >= core.STAY_BASE]
            if len(stays) > 1:
                default = int(agent.rollout.actions(obs["observation"][None], mask[None].astype(np.int8))[0])
                assert default in agent.candidates(obs["observation"], mask, default)
                seen += 1
            env.step(int(np.flatnonzero(mask)[0]))
    assert seen > 0


def test_a_strict_gate_plays_the_rollout_policy() -> None:
    """With a gate no candidate can pass on noisy worlds, the search plays what the network plays, except where a
    candidate gained the same amount in every world (zero spread), which it takes."""
    gated = agents.make("pimc:8,rollout=ppo,z=1e9", seed=1)
    network = agents.make("ppo")
    assert isinstance(gated, PIMCAgent)
    env = bourre_env.env(num_players=5)
    decisions = same = 0
    for seed in range(6):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            chosen = gated.act(obs)
            wanted = network.act(obs)
            decisions += 1
            same += chosen == wanted
            env.step(wanted)
    assert decisions > 50
    assert same / decisions > 0.9


def test_repeated_worlds_are_not_independent_evidence() -> None:
    rng = np.random.default_rng(1)
    distinct = rng.normal(0.0, 2.0, size=(2, 8))
    distinct[1] += 1.0
    gains = np.repeat(distinct, 8, axis=1)  # 64 worlds, 8 distinct, each drawn 8 times
    diff = gains[1] - gains[0]
    t_all = diff.mean() / (diff.std(ddof=1) / math.sqrt(64))
    t_distinct = diff.mean() / (diff.std(ddof=1) / math.sqrt(8))
    z = (t_all + t_distinct) / 2
    assert choose([0, 1], gains, 0, z) == 1  # counted as 64 worlds
    assert choose([0, 1], gains, 0, z, distinct=8) == 0  # as the 8 they are
    assert choose([0, 1], gains[:, :1], 0, 0.0, distinct=1) == 0  # one world: the default


def test_effective_worlds_lie_between_one_and_the_proposals() -> None:
    from benchmarks.inference_ess import effective_sizes, main

    in_tricks, sizes = effective_sizes(players=5, deals=3, proposals=64, tempers=[1.0, 1e-9], seed=0)
    assert sizes.shape == (len(in_tricks), 2) and len(in_tricks) > 0
    assert (sizes >= 1.0 - 1e-9).all() and (sizes <= 64 + 1e-9).all()
    # a temper near 0 flattens the weights: every proposal consistent with the observation counts fully
    assert (sizes[:, 1] >= sizes[:, 0] - 1e-9).all()
    with pytest.raises(SystemExit):
        main(["--temper", "0"])
