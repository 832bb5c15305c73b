"""Layer 3: no hidden information reaches an observation.

At many points of random games we relabel every card a player cannot see (other players'
hands, passed hands, the stock and its order, the discard pile, other players' discards) by a
random permutation of those cards, everywhere in the state at once. The result is another
deal consistent with everything that player knows; the player's observation must not change.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_game

import bourre_env
from bourre_env import core, observation
from bourre_env.core.rules import Rules, presets


def _relabel_hidden(s: np.ndarray, rules: Rules, viewer: int, rng: np.random.Generator) -> np.ndarray:
    n = rules.num_players
    known = int(s[core.S_HAND + viewer]) | int(s[core.S_PLAYED]) | int(s[core.S_DISCARDS + viewer])
    if s[core.S_FACE] >= 0:  # no card turned (dealer_picks_trump): the dealer's cards are all hidden
        known |= 1 << int(s[core.S_FACE])  # its place is public: the dealer's hand, dead, or played
    hidden = [c for c in rules.deck_cards() if not known >> c & 1]
    perm = dict(zip(hidden, rng.permutation(hidden).tolist(), strict=True))

    def remap_mask(mask: int) -> int:
        out = 0
        for c in range(52):
            if mask >> c & 1:
                out |= 1 << perm.get(c, c)
        return out

    t = s.copy()
    for q in range(n):
        if q != viewer:
            t[core.S_HAND + q] = remap_mask(int(s[core.S_HAND + q]))
            t[core.S_DISCARDS + q] = remap_mask(int(s[core.S_DISCARDS + q]))
            t[core.S_KNOWN_OUT + q] = remap_mask(int(s[core.S_KNOWN_OUT + q]))
    for base, length in ((core.S_STOCK, core.S_STOCK_LEN), (core.S_PILE, core.S_PILE_LEN)):
        for i in range(int(s[length])):
            t[base + i] = perm.get(int(s[base + i]), int(s[base + i]))
    t[core.S_RNG] = rng.integers(2**62)
    return t


@pytest.mark.parametrize(
    ("preset", "num_players"),
    [
        ("standard", 2),
        ("standard", 4),
        ("standard", 5),
        ("standard", 8),
        ("separate_trump_card", 5),
        ("double_ante", 4),
        ("wikipedia", 7),
        ("separate_trump_card_dealer_may_take", 6),
        ("two_round_declaration", 5),
        ("simultaneous_declaration", 6),
        ("four_card", 5),
        ("four_card", 8),
        ("dealer_picks_trump", 3),
        ("dealer_picks_trump", 6),
    ],
)
def test_hidden_cards_never_change_an_observation(preset: str, num_players: int) -> None:
    rules = presets[preset].replace(num_players=num_players)
    rng = np.random.default_rng(num_players)
    obs_a = np.zeros(observation.OBS_SIZE, dtype=np.float32)
    obs_b = np.zeros(observation.OBS_SIZE, dtype=np.float32)
    checked = 0
    for _ in range(40):
        for s, p in random_game(rules, rng):
            viewer = int(rng.integers(num_players))
            other = _relabel_hidden(s, rules, viewer, rng)
            observation.encode(s, p, viewer, obs_a)
            observation.encode(other, p, viewer, obs_b)
            assert np.array_equal(obs_a, obs_b), observation.as_dict(obs_a - obs_b)
            checked += 1
    assert checked > 300


def test_relabelling_is_not_vacuous() -> None:
    """The relabelled state does differ (else the test above could not fail)."""
    rules = Rules(num_players=5)
    rng = np.random.default_rng(0)
    for s, _ in random_game(rules, rng):
        other = _relabel_hidden(s, rules, 0, rng)
        assert not np.array_equal(other[core.S_HAND + 1 : core.S_HAND + 5], s[core.S_HAND + 1 : core.S_HAND + 5])
        break


def test_infos_are_empty_and_no_deck_attribute_leaks_through_observations() -> None:
    env = bourre_env.env(num_players=5)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        assert info == {}
        assert set(obs) == {"observation", "action_mask"}
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
