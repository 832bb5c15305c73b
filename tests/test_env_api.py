"""Layer 1: PettingZoo API conformance on many configurations, and the public helpers' contracts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import bourre_env
from bourre_env import actions, core
from bourre_env.core import cards

CONFIGS = [
    {"num_players": 2},
    {"num_players": 3, "must_trump_when_cannot_win": False},
    {"num_players": 4, "tie": "divide", "pot_limit": 10},
    {"num_players": 5},
    {"num_players": 6, "lead_trump_honors": True, "rake": 0.05},
    {"num_players": 7, "deals_per_episode": 3},
    {"num_players": 8, "max_discard": 3},
    {"num_players": 3, "ranks": 6, "hand_size": 4},
    {"num_players": 4, "illegal_action": "renege", "deals_per_episode": 2},
]


# every preset but standard (above) at three table sizes; wikipedia's rule differs at 7 and 8 players
PRESET_CONFIGS = [
    {"rules": name, "num_players": n, **extra}
    for name, sizes, extra in [
        ("double_ante", (2, 5, 8), {"deals_per_episode": 3}),
        ("dealer_antes_for_all", (3, 5, 7), {"deals_per_episode": 3}),
        ("wikipedia", (4, 7, 8), {}),
        ("separate_trump_card", (2, 5, 8), {"deals_per_episode": 2}),
        ("separate_trump_card_dealer_may_take", (2, 6, 8), {"deals_per_episode": 2}),
        ("two_round_declaration", (2, 5, 8), {"deals_per_episode": 3}),
        ("simultaneous_declaration", (3, 6, 8), {"deals_per_episode": 2}),
        ("four_card", (2, 5, 8), {"deals_per_episode": 3}),
        ("dealer_picks_trump", (2, 5, 8), {"deals_per_episode": 2}),
    ]
    for n in sizes
]


@pytest.mark.parametrize("config", CONFIGS + PRESET_CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_pettingzoo_api_and_seed(config: dict) -> None:
    """PettingZoo's own api_test and seed_test pass for every table size and several option settings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test resets with options of its own; we warn and ignore them
        api_test(bourre_env.env(**config), num_cycles=300)
        seed_test(lambda **kw: bourre_env.env(**config, **kw), num_cycles=300)


def test_quickstart_loop_runs_and_pays() -> None:
    """The README quickstart loop plays full episodes; final rewards sum to minus the change of the pot."""
    env = bourre_env.env(num_players=5, render_mode="ansi")
    rng = np.random.default_rng(0)
    for seed in range(20):
        env.reset(seed=seed)
        total = 0.0
        for _agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            total += reward
            assert info == {}
            action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
        s = env.unwrapped.state_vector
        assert total == -s[core.S_POT] - s[core.S_RAKE_TOTAL]


def test_illegal_action_error_names_legal_actions() -> None:
    env = bourre_env.env(num_players=4)
    env.reset(seed=1)
    with pytest.raises(ValueError, match="legal: 52 \\(pass\\)"):
        env.step(0 if env.unwrapped.hand(env.agent_selection)[0] != 0 else 1)
    with pytest.raises(ValueError, match="must act"):
        env.step(None)


def test_render_ansi_shows_only_the_viewer_hand() -> None:
    env = bourre_env.env(num_players=4, render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    viewer = env.agent_selection
    assert f"{viewer} holds: {cards.to_strs(env.unwrapped.hand(viewer))}" in text
    for other in env.possible_agents:
        if other != viewer:
            assert f"{other} holds" not in text
    assert "legal:" in text


def test_cards_notation() -> None:
    assert cards.parse("10H") == 34
    assert cards.parse("th") == 34
    assert cards.parse("AS KH 10D") == [51, 37, 21]
    assert cards.to_str(0) == "2C" and cards.to_str(51) == "AS"
    for c in range(52):
        assert cards.parse(cards.to_str(c)) == c
    for bad in ("1H", "10X", "", "H", "11S"):
        with pytest.raises(ValueError):
            cards.parse(bad)


def test_actions_helpers() -> None:
    hand = "AS 2C KH 10D 5S"
    assert actions.PASS == 52
    assert actions.play("AS") == 51
    assert actions.stay([], hand) == 53
    # positions are by ascending card id: 2C(0) 10D(21) KH(37) 5S(42) AS(51)
    assert actions.stay("2C 5S", hand) == 53 + 0b01001
    assert actions.discard_cards(53 + 0b01001, hand) == [0, 42]
    assert actions.describe(53 + 0b01001, hand) == "play, discard 2: 2C 5S"
    assert actions.describe(52) == "pass"
    assert actions.describe(51) == "play AS"
    assert actions.describe(np.int64(52)) == "pass"  # ids straight from np.flatnonzero(mask)
    with pytest.raises(ValueError, match="not in the hand"):
        actions.stay("3C", hand)
    with pytest.raises(ValueError):
        actions.describe(117)
    with pytest.raises(ValueError):
        actions.describe(True)


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"deck": "AS KS"}, "exactly once"),
        ({"dealer": 9}, "dealer"),
        ({"pot": -1}, "pot"),
    ],
)
def test_reset_option_errors(bad: dict, match: str) -> None:
    env = bourre_env.env(num_players=5)
    with pytest.raises(ValueError, match=match):
        env.reset(seed=0, options=bad)


@pytest.mark.parametrize(
    "options, field",
    [
        ({"num_players": 9}, "num_players"),
        ({"num_players": 1}, "num_players"),
        ({"tie": "split"}, "tie"),
        ({"rake": 1.5}, "rake"),
        ({"max_discard": 6}, "max_discard"),
        ({"num_players": 8, "ranks": 6}, "ranks"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"pot_limit": 0}, "pot_limit"),
        ({"no_such_rule": 1}, "unknown rule option"),
    ],
)
def test_rule_option_errors_name_the_field(options: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        bourre_env.env(**options)


def test_deck_given_in_dealing_order() -> None:
    """deck[0] goes to the dealer's left; the dealer's last card is the face-up trump."""
    deck = [cards.to_str(c) for c in range(52)]
    env = bourre_env.raw_env(num_players=4)
    env.reset(options={"deck": deck, "dealer": 2})
    s = env.state_vector
    assert env.hand("player_3") == [0, 4, 8, 12, 16]
    assert env.hand("player_2") == [3, 7, 11, 15, 19]
    assert s[core.S_FACE] == 19 and s[core.S_TRUMP] == 1
    assert list(s[core.S_STOCK : core.S_STOCK + 3]) == [20, 21, 22]
