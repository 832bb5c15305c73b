"""A real arena server on 127.0.0.1 (an ephemeral port) and bots that talk to it, for tests/test_arena_*.py."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("websockets", reason="the arena extra: pip install -e '.[arena]'")
pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")
pytest.importorskip("alembic", reason="the arena extra: pip install -e '.[arena]'")
pytest.importorskip("uvicorn", reason="the serve extra: pip install -e '.[serve]'")

from websockets.sync.client import connect  # noqa: E402

from train.arena import protocol  # noqa: E402
from train.arena.client import Bot, play  # noqa: E402
from train.arena.in_thread import serve_in_thread  # noqa: E402
from train.arena.server import Arena  # noqa: E402
from train.arena.storage import Store  # noqa: E402

WAIT = 120.0  # bound of every wait: a shared machine may be slow, a hang must still end


class Server:
    def __init__(self, folder: Path, ws: Any = None) -> None:
        self.store = Store(folder)
        self.operator = self.store.add_operator("tests")
        self.arena = Arena(self.store)
        self.uvicorn, self.port = serve_in_thread(self.arena, ws=ws)
        self.url = f"ws://127.0.0.1:{self.port}/bot"
        self.names = 0

    def new_bot(self) -> tuple[str, str]:
        self.names += 1
        name = f"bot{self.names}"
        return name, self.store.add_bot(name)

    def wait_connected(self, *names: str) -> None:
        deadline = time.monotonic() + WAIT
        while not set(names) <= set(self.arena.registry.connected()):
            assert time.monotonic() < deadline, f"bots {names} did not connect"
            time.sleep(0.02)

    def post(self, path: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """POST ``body`` as JSON to ``path``: the status and the answer's JSON (``headers`` with empty values drop
        those headers)."""
        sent = {"Content-Type": "application/json", **headers}
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=json.dumps(body).encode(),
            headers={k: v for k, v in sent.items() if v},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=WAIT) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def match(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        """POST /api/matches with the operator's token (``headers`` may replace it, or drop it with ``{}`` values)."""
        return self.post("/api/matches", body, {"Authorization": f"Bearer {self.operator}", **(headers or {})})

    def close(self) -> None:
        self.uvicorn.stop()
        self.store.close()


def served(tmp_path_factory: pytest.TempPathFactory, people: bool = False) -> Iterator[Server]:
    """A fixture's body: a server in a fresh folder (``people``: with seats for people on), closed after its tests."""
    s = Server(tmp_path_factory.mktemp("arena"))
    s.arena.people.enabled = people
    yield s
    s.close()


@pytest.fixture(scope="module", name="server")
def arena_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from served(tmp_path_factory)


class Recorder(Bot):
    """Plays the first legal action (or what ``choose`` says) and keeps every message it receives."""

    def __init__(self, choose: Callable[[dict[str, Any]], int] | None = None, observation: bool = False) -> None:
        self.messages: list[dict[str, Any]] = []
        self.choose = choose
        self.observation = observation

    def act(self, turn: dict[str, Any]) -> int:
        self.messages.append(turn)
        return self.choose(turn) if self.choose is not None else turn["legal"][0]["action"]

    def on_message(self, message: dict[str, Any]) -> None:
        self.messages.append(message)


def start(bot: Bot, server: Server, name: str, token: str) -> threading.Thread:
    """Play ``bot`` in a daemon thread until its first match ends."""
    thread = threading.Thread(
        target=play,
        args=(bot, server.url, name, token),
        kwargs={"reconnect": False, "until": lambda m: m["type"] == "match_end"},
        daemon=True,
    )
    thread.start()
    server.wait_connected(name)
    return thread


def raw(server: Server, hello: dict[str, Any] | None = None, **headers: str) -> Any:
    """A bare connection, after its hello (``None``: no hello sent)."""
    ws = connect(server.url, additional_headers=headers or None, open_timeout=WAIT).__enter__()
    if hello is not None:
        ws.send(json.dumps(hello))
    return ws


def hello(name: str, token: str, version: int = protocol.PROTOCOL_VERSION) -> dict[str, Any]:
    return {"type": "hello", "protocol": version, "name": name, "token": token}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int) -> None:
    for _ in range(int(WAIT / 0.05)):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the arena server did not listen")


def serve_process(
    data: Path, port: int, said: list[str] | None = None, database: str | None = None
) -> subprocess.Popen[str]:
    """``bourre arena serve`` (``train.arena.server.run``) in a process of its own, once it listens; ``said``
    receives the lines it printed until then; ``database``: a URL instead of the data folder's SQLite file."""
    code = f"from train.arena import server; server.run({str(data)!r}, port={port}, database={database!r})"
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    deadline = time.monotonic() + WAIT
    for line in process.stdout:  # the line it prints once the store is migrated, before it listens
        if said is not None:
            said.append(line)
        if "bots connect to" in line:
            break
        assert time.monotonic() < deadline
    wait_listening(port)
    return process


def ask_for_match(port: int, operator: str, body: dict[str, Any], answer: dict[str, Any]) -> None:
    """POST /api/matches; ``answer`` receives the status and the body (nothing if the server dies under it)."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/matches",
        json.dumps(body).encode(),
        {"Content-Type": "application/json", "Authorization": f"Bearer {operator}"},
    )
    with contextlib.suppress(OSError), urllib.request.urlopen(request, timeout=WAIT) as response:
        answer.update(status=response.status, body=json.loads(response.read()))
