"""The JavaScript example bot (train/arena/examples/first_legal.js, Node and the ws package) plays a match against a
built-in agent and a Python bot: the protocol needs nothing of Python. Skips where node or ws is missing (CI
installs ws: npm ci --prefix train/arena/examples)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from arena_helpers import WAIT, Recorder, Server, arena_server, start  # noqa: F401 (arena_server: the fixture 'server')

EXAMPLES = Path(__file__).resolve().parent.parent / "train" / "arena" / "examples"


@pytest.mark.parametrize("session", [False, True], ids=["single", "session"])
def test_the_javascript_bot_plays_a_match(server: Server, tmp_path: Path, session: bool) -> None:
    """A single-format match, and a session (the pot carried, ``format: session``), which a bot that follows the
    protocol plays with the same messages."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    if not (EXAMPLES / "node_modules" / "ws").is_dir():
        pytest.skip("the ws package is not installed: npm ci --prefix train/arena/examples")
    assert len((EXAMPLES / "first_legal.js").read_text().splitlines()) < 60
    (js, js_token), (py, py_token) = server.new_bot(), server.new_bot()
    token_file = tmp_path / "token"
    token_file.write_text(js_token)
    process = subprocess.Popen(
        [node, str(EXAMPLES / "first_legal.js"), server.url, js, str(token_file), "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        server.wait_connected(js)
        thread = start(Recorder(), server, py, py_token)
        body = {"seats": [f"bot:{js}", "heuristic", f"bot:{py}"], "deals": 3 if session else 2}
        status, answer = server.match({**body, "format": "session"} if session else body)
        thread.join(WAIT)
        output, _ = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
    assert status == 200, answer
    assert process.returncode == 0 and "finished" in output, output
    assert answer["report"]["format"] == ("session" if session else "single")
    counts = answer["report"]["results"][0]["counts"]
    assert counts["decisions"] > 0 and counts["fallbacks"] == 0
