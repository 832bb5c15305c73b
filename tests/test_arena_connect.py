"""The arena's commands as a user runs them, each in a process of its own: ``bourre connect`` plays a match, comes back
after its server restarts, and stops on Ctrl-C (status 130, one line, no traceback); ``bourre arena match`` sends the
operator's token; ``bourre arena serve`` makes an operator token at its first start. No timing is asserted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from arena_helpers import WAIT, Server, arena_server, free_port, serve_process  # noqa: F401 (arena_server: the fixture)

from train.arena.storage import Store

BOURRE = [sys.executable, "-c", "import sys; from train.cli import main; sys.exit(main())"]
ROOT = Path(__file__).resolve().parent.parent


def _connect(url: str, name: str, token_file: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*BOURRE, "connect", "random", "--url", url, "--name", name, "--token-file", str(token_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def _interrupt(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Ctrl-C: its status and what it wrote to stderr."""
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=WAIT)
    return process.returncode, err


def _bots(port: int, operator: str) -> list[str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/bots")
    request.add_header("Authorization", f"Bearer {operator}")
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as answer:
            bots: list[str] = json.loads(answer.read())["bots"]
            return bots
    except OSError:
        return []


def _match(port: int, operator: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/matches",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {operator}"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=WAIT) as answer:
        result: dict[str, Any] = json.loads(answer.read())
    return result


def test_bourre_connect_plays_a_match_and_stops_cleanly_on_ctrl_c(server: Server, tmp_path: Path) -> None:
    name, token = server.new_bot()
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    process = _connect(server.url, name, token_file)
    try:
        server.wait_connected(name)
        status, answer = server.match({"seats": ["heuristic", f"bot:{name}", "random"], "deals": 2})
        assert status == 200, answer
        counts = answer["report"]["results"][1]["counts"]
        assert counts["decisions"] > 0 and counts["fallbacks"] == 0
    finally:
        code, err = _interrupt(process)
    assert code == 130, err
    assert "Traceback" not in err and "bourre connect: stopped" in err
    assert f"{name}: {counts['decisions']} moves, 2 games" in err  # its progress line: 2 deals, each played once


def test_bourre_connect_comes_back_after_its_server_restarts(tmp_path: Path) -> None:
    store = Store(tmp_path)
    token, operator = store.add_bot("alice"), store.add_operator("tests")
    store.close()
    (tmp_path / "token").write_text(token)
    port = free_port()
    server = serve_process(tmp_path, port)
    process = _connect(f"ws://127.0.0.1:{port}/bot", "alice", tmp_path / "token")
    try:
        deadline = time.monotonic() + WAIT
        while "alice" not in _bots(port, operator):
            assert time.monotonic() < deadline and process.poll() is None, "bourre connect did not connect"
            time.sleep(0.05)
        server.kill()
        server.wait(WAIT)
        server = serve_process(tmp_path, port)  # the same port: the bot retries it
        while "alice" not in _bots(port, operator):
            assert time.monotonic() < deadline and process.poll() is None, "bourre connect did not come back"
            time.sleep(0.05)
        answer = _match(port, operator, {"seats": ["bot:alice", "heuristic"], "deals": 1})
        counts = answer["report"]["results"][0]["counts"]
        assert answer["report"]["status"] == "finished" and counts["decisions"] > 0 and counts["fallbacks"] == 0
    finally:
        code, err = _interrupt(process)
        server.kill()
        server.wait(WAIT)
    assert code == 130 and "Traceback" not in err, err
    assert "connection lost" in err  # told once per loss, on its progress line's stream


def test_bourre_arena_match_sends_the_operator_token(server: Server, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{server.port}"
    args = [*BOURRE, "arena", "match", "--seats", "heuristic,random", "--deals", "1", "--url", url]
    token_file = tmp_path / "operator"
    token_file.write_text(server.operator)
    done = subprocess.run([*args, "--token-file", str(token_file), "--fallback", "random"], capture_output=True,
                          text=True, cwd=ROOT, timeout=WAIT)  # fmt: skip
    assert done.returncode == 0 and "fallback random (finished)" in done.stdout, done.stderr
    env = {k: v for k, v in os.environ.items() if k != "BOURRE_ARENA_TOKEN"}
    refused = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=WAIT, env=env)
    assert refused.returncode == 2 and "an operator token is needed" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    token_file.write_text("not-a-token")
    wrong = subprocess.run([*args, "--token-file", str(token_file)], capture_output=True, text=True, cwd=ROOT,
                           timeout=WAIT)  # fmt: skip
    assert wrong.returncode == 2 and "unknown operator token" in wrong.stderr, wrong.stderr


def test_the_first_start_of_a_server_makes_an_operator_token(tmp_path: Path) -> None:
    said: list[str] = []
    server = serve_process(tmp_path, free_port(), said)
    server.kill()
    server.wait(WAIT)
    line = next(line for line in said if "the operator token" in line)
    token = line.rsplit(" ", 1)[1].strip()
    store = Store(tmp_path)
    try:
        assert store.operator_of(token) == "operator"
    finally:
        store.close()
    again = serve_process(tmp_path, free_port(), said := [])
    again.kill()
    again.wait(WAIT)
    assert not any("operator token" in line for line in said)  # made once: only its hash is kept
