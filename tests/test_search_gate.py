"""The search's confidence gate (``pimc``'s ``z`` option): the rollout policy's own action unless a candidate beats
it by more than ``z`` paired standard errors."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

import agents
import bourre_env
from agents.search.pimc import PIMCAgent, choose
from bourre_env import core
from bourre_env.observation import O_PHASE


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


def play_deals(num_players: int, seeds: range, play: Callable[[dict[str, np.ndarray]], int]) -> None:
    """Deal each seed and step every live seat with ``play(observation)``."""
    env = bourre_env.env(num_players=num_players)
    for seed in seeds:
        env.reset(seed=seed)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else play(obs))


def test_a_gated_draw_searches_the_policy_own_draw() -> None:
    agent = PIMCAgent(worlds=4, rollout="ppo", z=2.0, draws=1)
    seen = []

    def check(obs: dict[str, np.ndarray]) -> int:
        mask = obs["action_mask"]
        if sum(1 for a in np.flatnonzero(mask) if a >= core.STAY_BASE) > 1:
            default = int(agent.rollout.actions(obs["observation"][None], mask[None].astype(np.int8))[0])
            assert default in agent.candidates(obs["observation"], mask, default)
            seen.append(default)
        return int(np.flatnonzero(mask)[0])

    play_deals(5, range(40), check)
    assert seen


def test_a_strict_gate_plays_the_rollout_policy() -> None:
    """With a gate no candidate can pass on noisy worlds, the search plays what the network plays, except where a
    candidate gained the same amount in every world (zero spread), which it takes."""
    gated = agents.make("pimc:8,rollout=ppo,z=1e9", seed=1)
    network = agents.make("ppo")
    assert isinstance(gated, PIMCAgent)
    same = []

    def compare(obs: dict[str, np.ndarray]) -> int:
        wanted = network.act(obs)
        same.append(gated.act(obs) == wanted)
        return wanted

    play_deals(5, range(6), compare)
    assert len(same) > 50 and np.mean(same) > 0.9


@pytest.mark.parametrize("phases", ["tricks", "decisions"])
def test_the_search_keeps_to_its_phases(phases: str) -> None:
    agent = agents.make(f"pimc:4,rollout=ppo,phases={phases}", seed=0)
    network = agents.make("ppo")
    assert isinstance(agent, PIMCAgent)
    searched = {True: 0, False: 0}

    def check(obs: dict[str, np.ndarray]) -> int:
        action, values = agent.decide(obs)
        in_tricks = bool(obs["observation"][O_PHASE + 1] > 0.5)
        if in_tricks != (phases == "tricks"):
            assert not values and action == network.act(obs), "outside its phases the rollout policy acts"
        searched[in_tricks] += bool(values)
        return action

    play_deals(5, range(4), check)
    assert searched[phases == "tricks"] > 0 and searched[phases != "tricks"] == 0
    with pytest.raises(ValueError, match="phases"):
        agents.make("pimc:4,phases=draw")


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
