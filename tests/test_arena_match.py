"""The arena's game loop plays the evaluation's games (a server killed with SIGKILL mid-match, on SQLite and
PostgreSQL, is in tests/test_arena_postgres.py)."""

from __future__ import annotations

import asyncio

import numpy as np

import bourre_env
from bourre_env import history
from train.arena.match import MatchSpec, play_match
from train.arena.remote import Registry
from train.eval.duplicate import agent_seed, build_agent, make_deals, play_deal, table_rules


def test_a_match_of_built_in_agents_plays_the_evaluations_games() -> None:
    """The arena's game loop (on the event loop) against ``train.eval.duplicate.play_deal`` (the evaluation's): the
    same deals, rotations and agent seeds give the same outcome rows and hand histories."""
    seats = ("heuristic", "random", "heuristic", "random")
    spec = MatchSpec.from_request({"seats": list(seats), "deals": 3, "seed": 11})
    stored: list[tuple[int, int, np.ndarray, dict[str, object]]] = []

    async def keep(k: int, r: int, rows: np.ndarray, saved: dict[str, object]) -> None:
        stored.append((k, r, rows.copy(), saved))

    report = asyncio.run(play_match(spec, "0" * 16, Registry(), keep))
    assert report.status == "finished" and len(stored) == 3 * 4
    n = spec.players
    rules = table_rules(n, {})
    deals = make_deals(spec.seed, rules, spec.deals)
    entries = [build_agent(seat, agent_seed(spec.seed, n, 0, 1 + i)) for i, seat in enumerate(seats)]
    env = history.Recording(bourre_env.env(num_players=n))
    expected = []
    for k in range(spec.deals):
        for r in range(n):
            labels = [seats[(s - r) % n] for s in range(n)]
            rows = play_deal(env, [entries[(s - r) % n] for s in range(n)], deals, k, labels=labels)
            expected.append((k, r, rows, env.history(labels)))
    for (k, r, rows, saved), (k2, r2, rows2, saved2) in zip(stored, expected, strict=True):
        assert (k, r) == (k2, r2) and np.array_equal(rows, rows2) and saved == saved2
