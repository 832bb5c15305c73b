"""The search agents (``pimc``, ``ismcts``) and what they are built from: legal play in every preset and table
size, determinism under a seed, the budgets they are given, the rollout policies, and the worlds weighed by a
model of the other players."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from agents.search.inference import model_worlds
from agents.search.ismcts import ISMCTSAgent
from agents.search.pimc import PIMCAgent, draw_candidates, parse_options
from agents.search.rollout import Rollout
from bourre_env import actions, core
from bourre_env.core import cards
from bourre_env.core.rules import presets
from bourre_env.sampler import WorldSampler, observer_view
from tests.scripted_helpers import Table

CHEAP = ["pimc:3,rollout=random,infer=0", "ismcts:12,rollout=random,batch=4,infer=0"]
MODELLED = ["pimc:2,rollout=heuristic,infer=2", "ismcts:6,rollout=heuristic,batch=3,infer=2"]


def play_episode(env: Any, table: list[Any], seed: int) -> list[int]:
    env.reset(seed=seed)
    for agent in table:
        agent.reset()
    seat_of = env.unwrapped.agent_name_mapping
    taken = []
    for name in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = table[seat_of[name]].act(obs)
        assert isinstance(action, int)
        assert obs["action_mask"][action] == 1, f"{table[seat_of[name]].name} chose the illegal action {action}"
        taken.append(action)
        env.step(action)
    return taken


@pytest.mark.parametrize("preset", list(presets))
def test_search_agents_play_legal_actions_in_every_preset_and_size(preset: str) -> None:
    for n in range(2, 9):
        env = bourre_env.env(rules=preset, num_players=n)
        table = [agents.make(CHEAP[(n + s) % 2] if s % 2 == 0 else "heuristic", seed=s) for s in range(n)]
        for episode in range(2):
            play_episode(env, table, seed=100 * n + episode)


def test_search_agents_with_the_heuristic_model_play_legal_actions() -> None:
    for n, options in ((3, {}), (7, {"rules": "two_round_declaration"}), (5, {"rules": "four_card"})):
        env = bourre_env.env(num_players=n, **options)
        table = [agents.make(MODELLED[s % 2], seed=s) if s < 2 else agents.make("heuristic", seed=s) for s in range(n)]
        play_episode(env, table, seed=n)


@pytest.mark.parametrize("spec", CHEAP + MODELLED)
def test_search_agents_are_deterministic_given_their_seed(spec: str) -> None:
    env = bourre_env.env(num_players=4)
    runs = []
    for _ in range(2):
        table = [agents.make(spec, seed=7 + s) for s in range(2)] + [agents.make("heuristic", seed=s) for s in (2, 3)]
        runs.append([play_episode(env, table, seed=e) for e in range(2)])
    assert runs[0] == runs[1]


def a_decision(num_players: int = 5, seed: int = 0, phase: int = core.PLAY) -> dict[str, np.ndarray]:
    """An observation of the heuristic's games with a choice to make in ``phase`` (trick play after a trick)."""
    env = bourre_env.env(num_players=num_players)
    heuristic = agents.make("heuristic")
    for episode in range(50):
        env.reset(seed=seed + episode)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            s = env.unwrapped.state_vector
            if (
                s[core.S_PHASE] == phase
                and obs["action_mask"].sum() >= 2
                and (phase != core.PLAY or s[core.S_TRICK_NO] > 0)
            ):
                return obs
            env.step(heuristic.act(obs))
    raise AssertionError("no such decision")


def test_budgets_are_respected() -> None:
    obs = a_decision()
    pimc = PIMCAgent(worlds=12, rollout="random", infer=0, seed=1)
    pimc.act(obs)
    assert pimc.last_worlds == 12
    ismcts = ISMCTSAgent(iterations=20, batch=6, rollout="random", infer=0, seed=1)
    ismcts.act(obs)
    assert ismcts.last_iterations == 20 and sum(ismcts.last_visits.values()) == 20
    # a time budget stops after the first chunk once it is spent (any machine needs more than a microsecond)
    pimc = PIMCAgent(worlds=1000, rollout="random", infer=0, seed=1, ms=0.001)
    pimc.act(obs)
    assert pimc.last_worlds == 8
    ismcts = ISMCTSAgent(iterations=1000, batch=5, rollout="random", infer=0, seed=1, ms=0.001)
    ismcts.act(obs)
    assert ismcts.last_iterations == 5


def test_pimc_comes_in_with_the_ace_of_trumps() -> None:
    """Holding the ace of trumps, a player always takes a trick: playing can only win. Every world says so."""
    t = Table({0: "AS 2C 3D 4H 6C", 6: "7D 8D 9D 10D 3S"}, dealer=6, num_players=7)
    obs = t.env.observe("player_0")
    agent = PIMCAgent(worlds=24, rollout="heuristic", infer=0, seed=0)
    action = agent.act(obs)
    assert actions.is_stay(action)
    assert "AS" not in cards.to_strs(actions.discard_cards(action, t.hand_ids(0)))
    assert agent.last_values[core.PASS] == 0.0
    for a, value in agent.last_values.items():
        if actions.is_stay(a) and "AS" not in cards.to_strs(actions.discard_cards(a, t.hand_ids(0))):
            assert value >= 0.0, "keeping the ace of trumps, no world can bourré us"


def test_draw_candidates_are_pruned_around_the_heuristic_choice() -> None:
    t = Table({0: "AH 5S 2C 9D JC", 2: "7D 8D 9C 10D 3S"}, dealer=2, num_players=3)
    obs = t.env.observe("player_0")
    preferred = agents.make("heuristic").act(obs)
    chosen = draw_candidates(obs["observation"], obs["action_mask"], preferred, 3)
    assert len(chosen) == 3 and chosen[0] == preferred
    assert all(obs["action_mask"][a] for a in chosen)
    # the trump (5S) and the side ace stay in every candidate: they are the most valuable cards
    for a in chosen:
        assert "5S" not in cards.to_strs(actions.discard_cards(a, t.hand_ids(0)))
    pimc = PIMCAgent(worlds=2, rollout="random", infer=0, draws=3)
    assert pimc.candidates(obs["observation"], obs["action_mask"]) == [actions.PASS, *chosen]


def test_modelled_worlds_keep_the_observation() -> None:
    obs = a_decision(num_players=6, phase=core.PLAY)
    sampler = WorldSampler(obs["observation"])
    rng = np.random.default_rng(0)
    worlds = model_worlds(sampler, obs["observation"], 24, rng, oversample=4)
    assert worlds.shape == (24, core.STATE_SIZE)
    for w in worlds:
        assert np.array_equal(observer_view(w, sampler.params, 0), obs["observation"])


def test_rollouts_finish_the_deal() -> None:
    obs = a_decision(num_players=5, phase=core.DRAW_OR_PASS)
    sampler = WorldSampler(obs["observation"])
    for kind in ("random", "heuristic"):
        states = sampler.sample(6, seed=1)
        rollout = Rollout(kind, seed=0)
        rollout.run(states, sampler.params)
        assert np.isin(states[:, core.S_PHASE], [core.DEAL_OVER, core.GAME_OVER]).all()
        assert (
            states[:, core.S_REWARD : core.S_REWARD + 5].sum(axis=1) + states[:, core.S_POT]
            == sampler.sample(6, seed=1)[:, core.S_REWARD : core.S_REWARD + 5].sum(axis=1) + sampler.record.pot
        ).all(), "chips are conserved"
    with pytest.raises(ValueError, match="states"):
        Rollout("random").run(np.zeros((2, 3), dtype=np.int64), sampler.params)


def test_bad_specs_and_options_are_refused() -> None:
    with pytest.raises(ValueError, match="rollout"):
        Rollout("fast")
    with pytest.raises(ValueError, match="unknown option"):
        agents.make("pimc:8,speed=2")
    with pytest.raises(ValueError, match="worlds"):
        agents.make("pimc:0")
    with pytest.raises(ValueError, match="expected an integer"):
        agents.make("pimc:many")
    with pytest.raises(ValueError, match="iterations"):
        agents.make("ismcts:-3")
    with pytest.raises(ValueError, match="ms"):
        agents.make("ismcts:8,ms=0")
    assert parse_options("64,rollout=random", {"worlds": 32, "rollout": "auto"}) == {"worlds": 64, "rollout": "random"}
    assert agents.make("pimc").name == "pimc" and agents.make("ismcts:32").name == "ismcts:32"
    with pytest.raises(ValueError, match="allows no action"):
        agents.make("pimc").act({"observation": np.zeros(10, np.float32), "action_mask": np.zeros(117, np.int8)})


def test_agents_speed_times_each_decision_by_the_wall_and_the_cpu_clock() -> None:
    from benchmarks.agents_speed import measure

    wall, cpu = measure("pimc:2,rollout=random,infer=0", 3, "self", 0.2, seed=0, warmup=2, clock="both")
    assert wall.shape == cpu.shape and wall.size > 0
    assert (cpu >= 0).all() and (cpu <= wall + 1e-3).all(), "one thread cannot use more CPU time than wall time"
    assert measure("random", 3, "random", 0.05, seed=0, warmup=0, clock="cpu").ndim == 1
    with pytest.raises(ValueError, match="clock"):
        measure("random", 3, "self", 0.05, seed=0, clock="sundial")


def test_search_strength_writes_its_figures_and_plot(tmp_path: Any) -> None:
    pytest.importorskip("matplotlib", reason="the plot needs matplotlib (the eval extra)")
    import json

    from benchmarks.search_strength import main

    out = tmp_path / "strength"
    assert (
        main(["--pimc", "2", "--ismcts", "4", "--players", "3", "--deals", "2", "--seconds", "0.1", "--out", str(out)])
        == 0
    )
    rows = json.loads(out.with_suffix(".json").read_text())
    assert [(r["family"], r["budget"]) for r in rows] == [("pimc", 2), ("ismcts", 4)]
    for r in rows:
        low, high = r["replacement_advantage_ci95"]
        assert low <= r["replacement_advantage"] <= high
        assert 0 < r["cpu_median_ms"] <= r["cpu_p95_ms"] and r["decisions_timed"] > 0
    assert out.with_suffix(".png").stat().st_size > 1000
    # a family added to the earlier rows (--keep), and one measured again replaces its earlier row
    quick = ["--players", "3", "--deals", "2", "--seconds", "0.1", "--out", str(out), "--keep"]
    assert main(["--pimc", "2", "--ismcts", "--guided", "2", "--ppo", *quick]) == 0
    rows = json.loads(out.with_suffix(".json").read_text())
    assert [(r["family"], r["spec"]) for r in rows] == [
        ("ismcts", "ismcts:4"),
        ("pimc", "pimc:2"),
        ("guided", "pimc:2,rollout=ppo"),
        ("ppo", "ppo"),
    ]
    with pytest.raises(SystemExit):
        main(["--pimc", "--ismcts", "--ppo", "--deals", "5", "--out", str(out), "--keep"])  # rows of 2 deals, 3 players
    with pytest.raises(SystemExit):
        main(["--pimc", "--ismcts"])  # nothing to measure
