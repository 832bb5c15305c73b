"""Clairvoyant agents (``agents.clairvoyant``) and ``train.research.value_of_information``: the privileged view reaches
only the agents that see hidden cards, a clairvoyant agent is refused everywhere else, its worlds are the true deal
(with the stock re-ordered for ``sees=hands``), a fair candidate's report is ``evaluate``'s, and the command runs on
a tiny budget."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from agents import clairvoyant
from agents.base import AgentError
from bourre_env import core, view
from bourre_env.core.rules import Rules
from bourre_env.sampler import WorldSampler, observer_view
from train.eval.duplicate import evaluate, make_deals
from train.research import value_of_information as voi


class Spy:
    """A fair agent that keeps the keys of every observation dict it is given."""

    name = "spy"

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.keys: list[set[str]] = []

    def reset(self) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        self.keys.append(set(observation))
        return int(self.rng.choice(np.flatnonzero(observation["action_mask"])))


def test_only_agents_that_see_hidden_cards_get_the_deal() -> None:
    rules = Rules.from_options(num_players=3)
    deals = make_deals(7, rules, 2)
    env = bourre_env.env(num_players=3)
    seer = clairvoyant.make("4", 1)
    spies = [Spy(2), Spy(3)]
    for k in range(2):
        rows, state = voi.play_privileged_deal(env, [spies[0], seer, spies[1]], ["spy", "c", "spy"], deals, k, "deal")
        assert rows.shape == (3, 6) and view.phase_of(state) in (core.DEAL_OVER, core.GAME_OVER)
    assert all(keys == {"observation", "action_mask"} for spy in spies for keys in spy.keys)
    assert spies[0].keys and spies[1].keys


def test_clairvoyant_agents_are_refused_where_only_fair_agents_belong() -> None:
    assert "clairvoyant" not in agents.registered()
    with pytest.raises(ValueError, match="unknown agent"):
        agents.make("clairvoyant")
    with pytest.raises(AgentError, match="plays only where an evaluation hands it the deal"):
        evaluate(lambda seed: clairvoyant.make(None, seed), "random", players=3, deals=1, progress=False)
    from train.web.agent_specs import check_agent
    from train.web.errors import TableError

    with pytest.raises(TableError):
        check_agent("clairvoyant")
    with pytest.raises(ValueError, match="never the field"):
        voi.measure(["pimc:2"], ["clairvoyant:2"], [3], 1, 0, progress=False)
    with pytest.raises(ValueError, match="sees"):
        clairvoyant.make("4,sees=stock", 0)


def _draw_decision(
    players: int, seed: int, reshuffled: bool = False
) -> tuple[np.ndarray, clairvoyant.PrivilegedView, np.ndarray]:
    """The true state, the privileged view and the observation at the first draw (after a reshuffle, with
    ``reshuffled``) that leaves cards in the stock; the players before it discard as much as they may."""
    rules = Rules.from_options(num_players=players)
    p = rules.params()
    rng = np.random.default_rng(seed)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    for _ in range(50):
        deck = rng.permutation(np.asarray(rules.deck_cards(), dtype=np.int64))
        dealer = int(rng.integers(players))
        s = core.new_state()
        core.start_episode(s, p, deck, dealer, 0, int(rng.integers(2**62)))
        start_rng = view.rng_state_of(s)
        actions: list[int] = []
        while view.phase_of(s) == core.DRAW_OR_PASS:
            seat = view.to_act(s)
            ready = view.reshuffles_of(s) > 0 if reshuffled else s[view.stock_to_come(s)].size > 3
            if len(actions) >= 1 and ready and s[view.stock_to_come(s)].size > 1:
                deal = clairvoyant.PrivilegedView(deck, dealer, start_rng, tuple(actions), seat)
                return s.copy(), deal, observer_view(s, p, seat)
            core.legal_actions(s, p, mask)
            stays = [a for a in np.flatnonzero(mask).tolist() if a > core.STAY_BASE]
            most = max(stays, key=lambda a: bin(a - core.STAY_BASE).count("1"), default=-1)
            action = (most if reshuffled else int(rng.choice(stays))) if stays else int(np.flatnonzero(mask)[0])
            assert core.step(s, p, action)
            actions.append(action)
    raise AssertionError("no draw decision found")


@pytest.mark.parametrize(("players", "reshuffled"), [(3, False), (7, False), (8, True)])
def test_worlds_are_the_true_deal(players: int, reshuffled: bool) -> None:
    s, deal, obs = _draw_decision(players, seed=players, reshuffled=reshuffled)
    sampler = WorldSampler(obs)
    truth_hands = [view.hand_of(s, (deal.seat + r) % players) for r in range(players)]
    for sees in clairvoyant.SEES:
        agent = clairvoyant.ClairvoyantAgent(worlds=8, seed=0, sees=sees)
        agent._view = deal
        worlds = agent.draw_worlds(sampler, obs, 8)
        for w in worlds:
            assert [view.hand_of(w, r) for r in range(players)] == truth_hands
            assert np.array_equal(observer_view(w, sampler.params, 0), obs)
        stocks = {tuple(w[view.stock_to_come(w)].tolist()) for w in worlds}
        if sees == "all":
            assert stocks == {tuple(s[view.stock_to_come(s)].tolist())}
        else:
            assert len(stocks) > 1  # the stock's order is not seen
            assert {frozenset(x) for x in stocks} == {frozenset(s[view.stock_to_come(s)].tolist())}


def test_a_fair_candidate_gets_the_report_of_evaluate() -> None:
    cells = voi.measure(["heuristic", "random"], ["random"], [3], deals=3, seed=5, progress=False)
    for cell in cells:
        expected = evaluate(cell.candidate, "random", players=3, deals=3, seed=5, progress=False).table(3)
        assert dataclasses.asdict(cell.report) == dataclasses.asdict(expected)
    gain = cells[1].report.replacement_advantage - cells[0].report.replacement_advantage
    assert cells[1].gain_over_reference == pytest.approx(gain)


def test_command_on_a_tiny_budget(tmp_path: Path) -> None:
    out = tmp_path / "voi.json"
    args = ["--players", "3", "--fields", "random", "--worlds", "2", "--deals", "2", "--seed", "3"]
    assert voi.main([*args, "--json", str(out), "--no-progress"]) == 0
    data = json.loads(out.read_text())
    assert [c["candidate"] for c in data["cells"]] == voi.candidates_for(2)
    assert data["cells"][0]["gain_over_reference_ci95"] is None
