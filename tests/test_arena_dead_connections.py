"""A bot is never shut out by its own abandoned connection, and a seat that never lived is never rated: a client that
closed while its welcome was held back once left its slot marked open for good (every later hello refused as
"connected already"), and the ladder went on seating the dead connection and rating the fallback's moves as the
bot's."""

from __future__ import annotations

import dataclasses
import json
import time

import numpy as np
from arena_helpers import WAIT, Server, arena_server, hello, raw  # noqa: F401 (arena_server: the fixture 'server')

from train.arena import ratings
from train.arena.ratings import StoredMatch, rate
from train.eval.duplicate import CHIPS


def test_a_client_gone_while_its_welcome_is_held_back_leaves_no_live_slot(server: Server) -> None:
    name, token = server.new_bot()
    arrivals = server.arena.arrivals
    held = 0.5
    original = arrivals.wait
    arrivals.wait = lambda _name: held  # type: ignore[method-assign]  # as for a bot that reconnects in a loop
    try:
        ws = raw(server, hello(name, token))
        ws.close()  # gone before the welcome, which the server sends after the wait
        time.sleep(held + 0.3)
    finally:
        arrivals.wait = original  # type: ignore[method-assign]
    deadline = time.monotonic() + WAIT
    while server.arena.registry.is_live(name):
        assert time.monotonic() < deadline, "the abandoned connection's slot stayed live"
        time.sleep(0.02)
    again = raw(server, hello(name, token))
    try:
        answer = json.loads(again.recv(timeout=WAIT))
    finally:
        again.close()
    assert answer["type"] == "welcome", answer


def _reference(counts: dict[str, int] | None) -> tuple[StoredMatch, dict]:
    outcomes = np.zeros((3, 1, 2, 6), dtype=np.int64)
    outcomes[:, 0, 0, CHIPS] = [3, 1, 2]
    outcomes[:, 0, 1, CHIPS] = [-3, -1, -2]
    match = StoredMatch(
        "m",
        1.0,
        "finished",
        ("bot:x", "random"),
        9,
        (0, 1, 2),
        outcomes,
        (counts, None),
        np.zeros((3, 1), dtype=np.int64),
        ratings.RATED_FALLBACK,
    )
    return match, {("random", 2, 9, k): np.zeros((2, 6), dtype=np.int64) for k in range(3)}


def test_a_match_where_the_bot_made_no_move_of_its_own_is_tallied_never_rated() -> None:
    moves = {"decisions": 9, "timeouts": 9, "illegal": 0, "malformed": 0, "absent": 0, "forfeited": 0}
    dead, par = _reference({**moves, "fallbacks": 9})
    live, _ = _reference({**moves, "timeouts": 8, "fallbacks": 8})
    bot = rate([dead], par, ["random"], [2]).bot("x")
    assert bot is not None and bot.matches == 1 and bot.timeouts == 9  # tallied
    assert bot.rating is None and not bot.cells and bot.mu == 25.0  # rated in neither
    rated = rate([live], par, ["random"], [2]).bot("x")
    assert rated is not None and rated.rating is not None and rated.mu > 25.0  # one move of its own: rated
    unknown = rate([dataclasses.replace(dead, counts=(None, None))], par, ["random"], [2]).bot("x")
    assert unknown is not None and unknown.rating is not None  # no report: nothing says it never lived
