"""Bourré as an OpenSpiel game (``bourre_env.openspiel``): OpenSpiel's own checks, exact chance, perfect recall, and
seeded deals played through both the OpenSpiel game and ``bourre_v0`` with every mask, observation and return
compared."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is an optional extra: pip install -e '.[openspiel]'")

import bourre_env  # noqa: E402 - after the skip
from bourre_env import observation  # noqa: E402
from bourre_env import openspiel as bourre_openspiel  # noqa: E402

TINY = {"num_players": 2, "hand_size": 1, "ranks": 2, "max_discard": 0, "dealer": 0}
"""429 states: small enough to walk in a test."""
TINY_DRAW = {"num_players": 2, "hand_size": 1, "ranks": 2, "max_discard": 1, "dealer": 0}
"""A one-card hand that may be swapped: the draw's chance nodes in a walkable tree."""

SIM_CONFIGS = [
    {"num_players": 3},
    {"num_players": 5, "deals_per_episode": 2},
    {"num_players": 8, "hand_size": 6, "max_discard": 2},  # 48 cards dealt, 4 in the stock: draws reshuffle
    {"rules": "four_card", "num_players": 6},
    {"rules": "separate_trump_card_dealer_may_take", "num_players": 7},
    {"rules": "dealer_picks_trump", "num_players": 4},
    {"rules": "simultaneous_declaration", "num_players": 5},
    {"num_players": 4, "illegal_action": "renege"},
]


def load(params: dict) -> pyspiel.Game:
    """The game of ``params``: Rules fields, or a preset's name under ``rules`` with fields that change it."""
    params = dict(params)
    preset = params.pop("rules", None)
    if preset is not None:
        dealer = params.pop("dealer", -1)
        params = bourre_openspiel.parameters(bourre_env.Rules.from_options(preset, **params), dealer)
    return pyspiel.load_game(bourre_openspiel.GAME_NAME, params)


@pytest.mark.parametrize("params", SIM_CONFIGS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_random_simulation_with_serialization_and_cloning(params: dict) -> None:
    pyspiel.random_sim_test(load(params), num_sims=3, serialize=True, verbose=False)


def test_get_all_states_on_a_small_deck() -> None:
    from open_spiel.python.algorithms.get_all_states import get_all_states

    states = get_all_states(load(TINY), include_terminals=True, include_chance_states=True)
    assert len(states) == 429
    for state in states.values():
        if state.is_chance_node():
            assert math.isclose(sum(p for _, p in state.chance_outcomes()), 1.0)
            assert all(p > 0 for _, p in state.chance_outcomes())


def test_parameters_are_the_rules_fields() -> None:
    rules = bourre_env.Rules.from_options("four_card", num_players=3, max_discard=None, pot_limit=7)
    params = bourre_openspiel.parameters(rules)
    assert params["max_discard"] == -1 and params["pot_limit"] == 7 and params["hand_size"] == 4
    assert load(params).rules == rules
    assert load({"num_players": 3}).rules == bourre_env.Rules(num_players=3)
    with pytest.raises(ValueError, match="unknown parameter"):
        bourre_openspiel.rules_from_parameters({"num_player": 3})
    with pytest.raises(ValueError, match="dealer"):
        load({"num_players": 3, "dealer": 3})


def test_each_hand_is_dealt_once_with_its_probability() -> None:
    """Hands are dealt as sorted sets: every (hand, hand, turned card) deal is one chance path of probability
    1/840 (dealer 0: seat 1 gets 2 of the 8 cards, 28 ways; the dealer's turned card 6 ways, its other card 5)."""
    game = load({"num_players": 2, "hand_size": 2, "ranks": 2, "max_discard": 0, "dealer": 0})
    paths: dict[str, float] = {}
    stack = [(game.new_initial_state(), 1.0)]
    while stack:
        state, prob = stack.pop()
        if not state.is_chance_node():
            paths[state.history_str()] = prob
            continue
        for action, p in state.chance_outcomes():
            stack.append((state.child(action), prob * p))
    assert len(paths) == 28 * 6 * 5
    assert all(math.isclose(p, 1 / 840) for p in paths.values())


@pytest.mark.parametrize("params", [TINY, TINY_DRAW], ids=["no-draw", "draw"])
def test_perfect_recall_on_small_games(params: dict) -> None:
    """States that share a player's information state share that player's whole past: every information state and
    action of the player before it; and the information state tensor separates exactly what the string does."""
    game = load(params)
    seen: dict[str, tuple] = {}
    by_tensor: dict[bytes, set[str]] = defaultdict(set)
    draws = 0
    stack = [(game.new_initial_state(), ((),) * game.num_players())]
    while stack:
        state, pasts = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            draws += "drawing" in str(state)
            assert math.isclose(sum(p for _, p in state.chance_outcomes()), 1.0)
            stack.extend((state.child(a), pasts) for a, _ in state.chance_outcomes())
            continue
        player = state.current_player()
        info = state.information_state_string()
        assert seen.setdefault(info, pasts[player]) == pasts[player], info
        by_tensor[np.asarray(state.information_state_tensor(), np.float32).tobytes()].add(info)
        for action in state.legal_actions():
            grown = list(pasts)
            grown[player] = (*pasts[player], info, action)
            stack.append((state.child(action), tuple(grown)))
    assert all(len(strings) == 1 for strings in by_tensor.values())
    assert len(by_tensor) == len(seen)
    assert (draws > 0) == (params["max_discard"] > 0)


# ---------------------------------------------------------------------------- the same deals through bourre_v0
def _dealt(env, agents: list[str]) -> tuple[int, list[list[int]], int]:
    """The dealer, each seat's hand and the turned card (-1: none) of the deal the env just dealt."""
    view = observation.as_dict(env.observe(agents[0])["observation"])
    dealer = int(np.argmax(view["dealer"]))
    face = int(np.argmax(view["face_card"])) if view["face_card"].any() else -1
    return dealer, [env.hand(a) for a in agents], face


def _follow_deal(state, dealer: int, hands: list[list[int]], face: int) -> None:
    """Apply the chance outcomes that deal ``hands`` and ``face``: each node's outcome is a card the env dealt."""
    first = state.chance_outcomes()[0][0]
    if state.action_to_string(pyspiel.PlayerId.CHANCE, first).startswith("dealer:"):
        state.apply_action(dealer)
    while state.is_chance_node():
        options = [a for a, _ in state.chance_outcomes()]
        text = state.action_to_string(pyspiel.PlayerId.CHANCE, options[0])  # "turn:QS" or "deal:QS>seat"
        if text.startswith("turn:"):
            state.apply_action(face)
        else:
            seat = int(text.split(">")[1])
            state.apply_action(min(a for a in options if a in hands[seat] and a != face))


def _follow_draw(state, drawn: set[int]) -> None:
    while state.is_chance_node():
        options = [a for a, _ in state.chance_outcomes()]
        state.apply_action(min(a for a in options if a in drawn))


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 3},
        {"num_players": 5},
        {"num_players": 8, "hand_size": 6, "max_discard": 2},
        {"rules": "four_card", "num_players": 4},
        {"rules": "separate_trump_card_dealer_may_take", "num_players": 6},
        {"rules": "dealer_picks_trump", "num_players": 3},
        {"rules": "simultaneous_declaration", "num_players": 4},
        {"num_players": 4, "deals_per_episode": 3},
    ],
    ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()),
)
def test_seeded_deals_match_bourre_v0(options: dict) -> None:
    game = load(options)
    for seed in range(3):
        env = bourre_env.env(**options)
        env.reset(seed=seed)
        agents = list(env.possible_agents)
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        _follow_deal(state, *_dealt(env, agents))
        totals = dict.fromkeys(agents, 0.0)
        while not state.is_terminal():
            agent = env.agent_selection
            player = agents.index(agent)
            assert state.current_player() == player
            legal = env.unwrapped.legal_actions()
            assert state.legal_actions() == legal
            for q, other in enumerate(agents):
                np.testing.assert_array_equal(
                    np.asarray(state.observation_tensor(q), np.float32), env.observe(other)["observation"]
                )
            action = int(rng.choice(legal))
            before = set(env.hand(agent))
            deal_no = observation.as_dict(env.observe(agent)["observation"])["deal"][0]
            env.step(action)
            for a in agents:
                totals[a] += env.rewards[a]
            state.apply_action(action)
            if state.is_chance_node():
                new_deal = observation.as_dict(env.observe(agents[0])["observation"])["deal"][0] != deal_no
                if new_deal:
                    _follow_deal(state, *_dealt(env, agents))
                else:
                    _follow_draw(state, set(env.hand(agent)) - before)
        assert all(env.terminations[a] for a in agents)
        assert state.returns() == [totals[a] for a in agents]


def test_the_env_reshuffle_is_met_as_chance() -> None:
    """A draw that runs past the stock: the chance nodes pick from the reshuffled pile, and the core draws exactly
    the cards they picked (the adapter raises otherwise)."""
    game = load({"num_players": 8, "hand_size": 6, "max_discard": 2, "dealer": 0})
    rng = np.random.default_rng(3)
    reshuffled = 0
    for _ in range(5):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                actions, probs = zip(*outcomes, strict=False)
                state.apply_action(int(rng.choice(actions, p=probs)))
            else:
                legal = state.legal_actions()
                stays = [a for a in legal if a >= 53]
                state.apply_action(max(stays) if stays else int(rng.choice(legal)))  # discard as much as allowed
            reshuffled += "reshuffled=0" in state.observation_string(0)
    assert reshuffled > 0
