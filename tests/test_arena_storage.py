"""The arena's database: migrations at start, and a server killed with SIGKILL mid-match loses no finished game."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
from arena_helpers import WAIT, Recorder, free_port, serve_process

import bourre_env
from bourre_env import history
from train.arena.client import play
from train.arena.match import MatchSpec, play_match
from train.arena.remote import Registry
from train.arena.storage import Store
from train.eval.duplicate import agent_seed, build_agent, make_deals, play_deal, table_rules


def test_sigkill_mid_match_loses_no_finished_game(tmp_path: Path) -> None:
    store = Store(tmp_path)
    token = store.add_bot("slow")
    operator = store.add_operator("tests")
    port = free_port()
    process = serve_process(tmp_path, port)
    try:
        bot = Recorder(choose=lambda turn: (time.sleep(0.02), turn["legal"][0]["action"])[1])
        url = f"ws://127.0.0.1:{port}/bot"

        def bot_plays() -> None:
            with contextlib.suppress(ConnectionError):  # the server is killed under it
                play(bot, url, "slow", token, reconnect=False)

        threading.Thread(target=bot_plays, daemon=True).start()
        body = json.dumps({"seats": ["heuristic", "bot:slow", "random"], "deals": 200}).encode()

        def ask() -> None:
            import urllib.request

            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/matches",
                body,
                {"Content-Type": "application/json", "Authorization": f"Bearer {operator}"},
            )
            with contextlib.suppress(OSError):  # the server is killed under it
                urllib.request.urlopen(request, timeout=WAIT)

        deadline = time.monotonic() + WAIT
        while not bot.messages:  # not connected yet: ask again until the bot sits
            threading.Thread(target=ask, daemon=True).start()
            time.sleep(0.5)
            assert time.monotonic() < deadline
        finished = [m for m in bot.messages if m["type"] == "deal_end"]
        while len(finished) < 4:
            time.sleep(0.05)
            finished = [m for m in bot.messages if m["type"] == "deal_end"]
            assert time.monotonic() < deadline
        os.kill(process.pid, signal.SIGKILL)
        process.wait(WAIT)
        told = len([m for m in bot.messages if m["type"] == "deal_end"])
    finally:
        if process.poll() is None:
            process.kill()
    match = bot.messages[0]["match"]
    stored = store.match(match)
    assert stored is not None and stored["status"] == "running"
    # the game is committed before its deal_end is sent, so every game the bot was told of is stored
    assert stored["games"] >= told >= 4
    games = store.games(match)
    assert [(g["deal"], g["rotation"]) for g in games] == [(k // 3, k % 3) for k in range(len(games))]
    assert all(g["history"]["deals"][0]["results"]["payments"] for g in games)
    again = serve_process(tmp_path, free_port())
    again.kill()
    again.wait(WAIT)
    assert store.match(match)["status"] == "interrupted"  # type: ignore[index]
    store.close()


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
