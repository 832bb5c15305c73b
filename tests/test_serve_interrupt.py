"""Ctrl-C stops ``bourre serve`` within seconds, even while an operator's agent never returns (issue 35, item 3)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the server tests need the serve extra (pip install -e '.[serve]')")

from train import serve  # noqa: E402
from train.serve import tables  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

AGENT = """
import pathlib
import threading


class Forever:
    \"\"\"Says that it is thinking (a file), then never answers.\"\"\"

    def __init__(self, seed=None):
        self.name = "forever"

    def reset(self):
        pass

    def act(self, observation):
        pathlib.Path("thinking").touch()
        threading.Event().wait()
"""


def _post(port: int, path: str, body: object) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        connection.getresponse().read()
    except OSError:
        pass  # the server went away under it: what the test wants
    finally:
        connection.close()


def test_ctrl_c_stops_the_server_while_an_agent_never_answers(tmp_path: Path) -> None:
    (tmp_path / "forever.py").write_text(AGENT)
    with socket.socket() as sock:  # a free port on 127.0.0.1
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    spec = "forever.py:Forever"
    process = subprocess.Popen(
        [sys.executable, "-m", "train.cli", "serve", "--port", str(port), "--seed", "1", "--agent", spec],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a terminal runs a command: Ctrl-C reaches it there
    )
    try:
        deadline = time.monotonic() + 300  # the first start may compile the rules core
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert process.poll() is None, process.communicate()[1][-3000:]
                assert time.monotonic() < deadline, "bourre serve did not start"
                time.sleep(0.2)
        # a table whose agents never answer: the request waits on them
        table = threading.Thread(
            target=_post, args=(port, "/api/tables", {"players": 3, "seat": 0, "agents": [spec, spec]}), daemon=True
        )
        table.start()
        deadline = time.monotonic() + 60
        while not (tmp_path / "thinking").exists():
            assert process.poll() is None and time.monotonic() < deadline, "the agent was never asked to move"
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)
        interrupted = time.monotonic()
        _, stderr = process.communicate(timeout=60)
        took = time.monotonic() - interrupted
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    # before the agents' clock would have let the table go (twice tables.MOVE_SECONDS: two such seats); the margin
    # over STOP_SECONDS is for a loaded machine (a Ctrl-C exit took 10 times as long on CI as on a quiet machine)
    assert took < serve.STOP_SECONDS + 10 < 2 * tables.MOVE_SECONDS, f"exited {took:.1f} s after Ctrl-C"
    assert process.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    assert "bourre serve: stopped" in stderr  # it says that it did not wait for the agent
