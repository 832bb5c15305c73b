"""Agents: the interface, legality over many random games, determinism, ``make`` errors, the
heuristic's expert choices on scripted deals, and its strength against random play."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from agents.base import Agent
from agents.heuristic import PARAM_SETS, HeuristicAgent
from agents.styles import STYLES
from bourre_env import actions
from bourre_env.core import cards
from tests.scripted_helpers import Table, cardset, names
from train.eval.duplicate import evaluate

# Every agent the registry builds, variants included; the search agents with small budgets and random rollouts
# (tests/test_search_agents.py plays them with their model of the others).
SEARCH = {"pimc": "pimc:2,rollout=random,infer=0", "ismcts": "ismcts:8,rollout=random,batch=4,infer=0"}
SPECS = [
    # a bare llm needs a model and a server (tests/test_llm_agent.py plays it against a scripted one)
    *(SEARCH.get(name, name) for name in agents.registered() if name not in ("llm", "style")),
    *(f"heuristic:{v}" for v in PARAM_SETS if v != "default"),
    *(f"style:{s}" for s in STYLES),  # a bare style names none
]

# One table of mixed agents per configuration: table sizes 2..8 and rule options that change what
# an agent sees (discard limits, optional trumping, honours leads, small decks, episodes of several
# deals with a pot limit, reneging allowed).
CONFIGS: list[dict[str, Any]] = [
    *({"num_players": n} for n in range(2, 9)),
    {"num_players": 8, "max_discard": 3},
    {"num_players": 4, "must_trump_when_cannot_win": False, "lead_trump_honors": True},
    {"num_players": 3, "ranks": 6, "hand_size": 4},
    {"num_players": 6, "hand_size": 6},
    {"num_players": 7, "deals_per_episode": 3, "pot_limit": 12, "tie": "divide"},
    {"num_players": 5, "illegal_action": "renege", "deals_per_episode": 2},
]


def play_episode(env: Any, table: list[Agent], seed: int) -> list[int]:
    """One episode through the AEC env with ``table[s]`` in seat ``s``; every action, checked legal."""
    env.reset(seed=seed)
    for agent in table:
        agent.reset()
    seat_of = env.unwrapped.agent_name_mapping
    taken: list[int] = []
    for name in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = table[seat_of[name]].act(obs)
        assert isinstance(action, int), f"{table[seat_of[name]].name} returned {action!r}"
        assert obs["action_mask"][action] == 1, f"{table[seat_of[name]].name} chose the illegal action {action}"
        taken.append(action)
        env.step(action)
    return taken


@pytest.mark.parametrize("spec", SPECS)
def test_every_agent_has_the_interface(spec: str) -> None:
    agent = agents.make(spec, seed=3)
    assert isinstance(agent, Agent)
    assert isinstance(agent.name, str) and agent.name.split(":")[0] == spec.split(":")[0]
    agent.reset()


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_agents_only_play_legal_actions(config: dict[str, Any]) -> None:
    """Several agents at one table, every seat's agent cycling through the registry, many episodes."""
    env = bourre_env.env(**config)
    n = config["num_players"]
    for episode in range(40):
        table = [agents.make(SPECS[(episode + s) % len(SPECS)], seed=100 * episode + s) for s in range(n)]
        play_episode(env, table, seed=episode)


@pytest.mark.parametrize("spec", SPECS)
def test_agents_are_deterministic_given_their_seed(spec: str) -> None:
    env = bourre_env.env(num_players=5)
    runs = []
    for _ in range(2):
        table = [agents.make(spec, seed=7 + s) for s in range(5)]
        runs.append([play_episode(env, table, seed=e) for e in range(6)])
    assert runs[0] == runs[1]


def test_make_errors_name_the_known_agents_and_variants() -> None:
    with pytest.raises(ValueError, match="unknown agent 'nobody'.*heuristic.*random"):
        agents.make("nobody")
    with pytest.raises(ValueError, match="unknown heuristic variant 'reckless'.*default.*loose.*tight"):
        agents.make("heuristic:reckless")
    with pytest.raises(ValueError, match="no variants"):
        agents.make("random:tight")
    with pytest.raises(ValueError, match="non-empty"):
        agents.make("  ")
    assert agents.make("heuristic").name == "heuristic"
    assert agents.make("heuristic:tight").name == "heuristic:tight"
    assert isinstance(agents.make("heuristic:loose", seed=1), HeuristicAgent)


def test_heuristic_refuses_an_observation_with_nothing_to_decide() -> None:
    env = bourre_env.env(num_players=3)
    env.reset(seed=0)
    idle = next(a for a in env.agents if a != env.agent_selection)
    with pytest.raises(ValueError, match="allows no action"):
        agents.make("heuristic").act(env.observe(idle))


# ---------------------------------------------------------------------- scripted expert choices
def heuristic_choice(t: Table, seat: int, spec: str = "heuristic") -> int:
    assert t.seat == seat
    return agents.make(spec, seed=0).act(t.env.observe(f"player_{seat}"))


@pytest.mark.parametrize("spec", [s for s in SPECS if s.startswith("heuristic")])
def test_heuristic_plays_a_sure_trick_and_keeps_it(spec: str) -> None:
    """The ace of trumps always takes a trick, so playing cannot cost the pot: even a tight
    player comes in, and keeps the ace."""
    t = Table({0: "AS 2C 3D 4H 6C", 6: "7D 8D 9D 10D 3S"}, dealer=6, num_players=7)
    action = heuristic_choice(t, 0, spec)
    assert actions.is_stay(action)
    assert "AS" not in cards.to_strs(actions.discard_cards(action, t.hand_ids(0)))


def test_heuristic_passes_a_hopeless_hand_after_others_came_in() -> None:
    """No trump, no ace, and three players already in: a bourré is likely, the pot is not."""
    t = Table({4: "2C 3D 4H 6C 7H", 6: "7D 8D 9D 10D 3S"}, dealer=6, num_players=7)
    for seat in range(3):
        t.stay(seat)
    t.pass_(3)
    assert heuristic_choice(t, 4) == actions.PASS


def test_heuristic_draws_keeping_trumps_and_side_aces() -> None:
    """Three players, a low trump and a side ace: play, keep both, draw three."""
    t = Table({0: "AH 5S 2C 9D JC", 2: "7D 8D 9C 10D 3S"}, dealer=2, num_players=3)
    action = heuristic_choice(t, 0)
    assert actions.is_stay(action)
    assert names(actions.discard_cards(action, t.hand_ids(0))) == cardset("2C 9D JC")


def test_last_to_play_wins_as_cheaply_as_possible() -> None:
    """Last to a heart trick with the ace and king of hearts: the king takes it, the ace is kept."""
    t = Table({0: "5H 6S 7S 8S 9S", 1: "AH KH 3D 4D 2C"}, dealer=1, num_players=2)
    t.decide({0: "", 1: ""})
    t.play(0, "5H")
    assert heuristic_choice(t, 1) == cards.to_id("KH")


def test_a_card_that_cannot_win_is_the_lowest() -> None:
    """Following a led ace: nothing wins, so the lowest heart goes."""
    t = Table({0: "AH 6S 7S 8S 9S", 1: "QH 2H 9H 4D 2C", 2: "3C 4C 5C 6C 7C"}, dealer=2, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    t.play(0, "AH")
    assert heuristic_choice(t, 1) == cards.to_id("2H")


def test_the_highest_trump_is_cashed_on_lead() -> None:
    """Leading with the two top trumps and worthless side cards: lead a top trump (it keeps the lead
    and pulls the opponents' trumps)."""
    t = Table({0: "AC KC 2D 3H 4S", 1: "5C 6D 7D 8D 9D", 2: "JH QH 9H 10H 6C"}, dealer=2, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    assert heuristic_choice(t, 0) in {cards.to_id("AC"), cards.to_id("KC")}


# ---------------------------------------------------------------------- strength
def test_heuristic_beats_random_by_a_clear_margin() -> None:
    """Duplicate evaluation (``train.eval.duplicate``), fixed seed: the 95% t-interval of the heuristic's
    advantage over a random field excludes 0 at 4 and at 7 players."""
    report = evaluate("heuristic", "random", players=(4, 7), deals=100, seed=0, workers=1, progress=False)
    for table in report.tables:
        assert table.advantage_ci95 is not None
        low, high = table.advantage_ci95
        assert low > 0.0, f"{table.players} players: advantage {table.advantage:.3f} CI [{low:.3f}, {high:.3f}]"
        assert np.isfinite(high)
