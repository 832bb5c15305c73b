"""The arena's database: migrations at start, and a server killed with SIGKILL mid-match loses no finished game."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from arena_helpers import WAIT, Recorder

from train.arena.client import play
from train.arena.storage import Store


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(data: Path, port: int) -> subprocess.Popen[str]:
    code = f"from train.arena import server; server.run({str(data)!r}, port={port})"
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    deadline = time.monotonic() + WAIT
    for line in process.stdout:  # the line it prints once the store is migrated, before it listens
        if "bots connect to" in line:
            break
        assert time.monotonic() < deadline
    for _ in range(int(WAIT / 0.05)):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the arena server did not listen")


def test_sigkill_mid_match_loses_no_finished_game(tmp_path: Path) -> None:
    store = Store(tmp_path)
    token = store.add_bot("slow")
    port = _free_port()
    process = _serve(tmp_path, port)
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
                f"http://127.0.0.1:{port}/api/matches", body, {"Content-Type": "application/json"}
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
    again = _serve(tmp_path, _free_port())
    again.kill()
    again.wait(WAIT)
    assert store.match(match)["status"] == "interrupted"  # type: ignore[index]
