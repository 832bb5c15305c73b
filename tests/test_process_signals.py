"""`bourre arena serve` as a process: a signal during a match stops it in one line, never a traceback.

The connection guard, the pages and the storage faults are in tests/test_connections.py, tests/test_arena_pages.py and
tests/test_arena_newer_database.py; this file holds what needs the server as a process."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from arena_helpers import WAIT, Recorder, free_port, wait_listening

from train.arena.client import play
from train.arena.storage import Store


def _ask(port: int, operator: str, body: dict[str, Any]) -> None:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/matches",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {operator}"},
        method="POST",
    )
    with contextlib.suppress(Exception):  # the server stops under the request
        urllib.request.urlopen(request, timeout=WAIT).read()


def _serve_command(data: Path, port: int) -> subprocess.Popen[str]:
    """``bourre arena serve`` as the command line runs it, once it listens."""
    argv = ["arena", "serve", "--data", str(data), "--port", str(port)]
    code = f"import sys; from train import cli; sys.exit(cli.main({argv!r}))"
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    wait_listening(port)
    return process


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_a_match_stops_the_server_without_a_traceback(tmp_path: Path, sig: int) -> None:
    """SIGTERM stops ``bourre arena serve`` as Ctrl-C does: the match under way ends after its game, the match is
    marked interrupted at the next start, and nothing the process prints is a traceback."""
    store = Store(tmp_path)
    token, operator = store.add_bot("slow"), store.add_operator("tests")
    port = free_port()
    process = _serve_command(tmp_path, port)
    try:
        bot = Recorder(choose=lambda turn: (time.sleep(0.02), turn["legal"][0]["action"])[1])

        def bot_plays() -> None:
            with contextlib.suppress(ConnectionError):  # the server stops under it
                play(bot, f"ws://127.0.0.1:{port}/bot", "slow", token, reconnect=False)

        threading.Thread(target=bot_plays, daemon=True).start()
        body = {"seats": ["heuristic", "bot:slow", "random"], "deals": 500}
        deadline = time.monotonic() + WAIT
        while not bot.messages:  # not connected yet: ask again until the bot sits
            threading.Thread(target=_ask, args=(port, operator, body), daemon=True).start()
            time.sleep(0.5)
            assert time.monotonic() < deadline
        while len([m for m in bot.messages if m["type"] == "deal_end"]) < 2:
            time.sleep(0.05)
            assert time.monotonic() < deadline
        process.send_signal(sig)
        process.wait(WAIT)
        assert process.stdout is not None
        said = process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
    assert "Traceback" not in said, said
    assert process.returncode in (0, 130, -sig), (process.returncode, said)
    store.close()
