"""A long random run (at least 10^6 decisions) with the invariants checked: ``pytest -m slow tests/test_long.py``."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import card_locations

from bourre_env import core
from bourre_env.batch import BatchGame


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 6, 7, 8])
def test_million_random_decisions(num_players: int) -> None:
    g = BatchGame(batch_size=256, seed=num_players, num_players=num_players, deals_per_episode=5)
    deck = sorted(g.rules.deck_cards())
    total = 0
    while total < 1_000_000 // 7 + 1:
        total += g.random_play(50, with_observations=True)
        masks = g.legal_masks()
        assert masks.any(axis=1).all()
        for b in range(g.batch_size):
            assert sorted(card_locations(g.states[b], g.rules)) == deck, Counter(card_locations(g.states[b], g.rules))
    aborts = int(g.scratch[:, core.X_CINCH_ABORTS].sum())
    print(f"{num_players} players: {total} decisions, cinch searches over budget in live episodes: {aborts}")
