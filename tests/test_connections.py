"""The connection guard of both web servers (``train.web.connections``): slow clients, and clients that never read
their answers, are dropped, connections are
bounded in all and by address, refusals and a run out of file descriptors are logged once, and WebSockets live on.

Every client here is on 127.0.0.1, few (at most a few hundred) and bounded in time; nothing asserts a duration: each
wait has a generous bound only so that a hang ends."""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the serve extra: pip install -e '.[serve]'")
pytest.importorskip("websockets", reason="the arena extra: pip install -e '.[arena]'")

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import PlainTextResponse, Response  # noqa: E402
from starlette.routing import Route, WebSocketRoute  # noqa: E402
from starlette.websockets import WebSocket  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

from train.web import connections  # noqa: E402

WAIT = 60.0


async def _page(request: Request) -> Response:
    return PlainTextResponse("ok")


async def _big(request: Request) -> Response:
    return PlainTextResponse("x" * (4 << 20))  # far more than a socket's buffers hold


async def _upload(request: Request) -> Response:
    return PlainTextResponse(str(len(await request.body())))


async def _echo(ws: WebSocket) -> None:
    await ws.accept()
    while True:
        message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            return
        await ws.send_text(message.get("text") or "")


def app() -> Starlette:
    return Starlette(
        routes=[
            Route("/", _page),
            Route("/big", _big),
            Route("/upload", _upload, methods=["POST"]),
            WebSocketRoute("/ws", _echo),
        ]
    )


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[tuple[connections.Guard, int]]:
    """A guarded server in a thread: its guard (``request.param``: the guard's arguments) and its port."""
    guard = connections.Guard(**getattr(request, "param", {}))
    config = connections.config(app(), guard=guard, host="127.0.0.1", port=0, log_level="warning")
    server = connections.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    yield guard, server.servers[0].sockets[0].getsockname()[1]
    server.should_exit = True
    thread.join(WAIT)


def _get(port: int, path: str = "/") -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=WAIT) as answer:
        return str(answer.read().decode())


def _slow(port: int, first: bytes = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ") -> socket.socket:
    """A connection that has sent part of a request."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    sock.sendall(first)
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed ``sock`` (after a byte more of the header, as a slow client sends)."""
    try:
        sock.send(b"x")
        sock.settimeout(0.05)
        return sock.recv(4096) == b""
    except (TimeoutError, BlockingIOError):
        return False
    except OSError:  # reset, broken pipe
        return True


def _wait_all_closed(socks: list[socket.socket]) -> None:
    """Trickle a byte into each until the server has closed every one (bounded: a server that never does fails)."""
    deadline = time.monotonic() + WAIT
    open_ = list(socks)
    while open_:
        assert time.monotonic() < deadline, f"{len(open_)} of {len(socks)} slow connections are still open"
        open_ = [s for s in open_ if not _closed_by_server(s)]
        time.sleep(0.2)


@pytest.mark.parametrize("served", [{"request_seconds": 1.0}], indirect=True)
def test_slow_requests_are_dropped_while_pages_and_websockets_answer(served: tuple[connections.Guard, int]) -> None:
    guard, port = served
    slow = [_slow(port) for _ in range(40)]
    # a body that stops short of its declared length, and a second request on a kept-alive connection that stops
    # in its headers (uvicorn's keep-alive timer stops at the first byte of it)
    slow.append(_slow(port, b"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n0123456789"))
    kept = _slow(port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert b"200 OK" in kept.recv(4096)
    kept.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    slow.append(kept)
    # while they are held: a page, a whole upload, and a WebSocket, which outlives the request timeout
    assert _get(port) == "ok"
    with connect(f"ws://127.0.0.1:{port}/ws", open_timeout=WAIT) as ws:
        ws.send("hello")
        assert ws.recv(timeout=WAIT) == "hello"
        _wait_all_closed(slow)
        time.sleep(2 * guard.request_seconds)
        ws.send("still here")
        assert ws.recv(timeout=WAIT) == "still here"
    assert guard.timed_out >= len(slow)
    assert _get(port) == "ok"
    for s in slow:
        s.close()


@pytest.mark.parametrize("served", [{"write_seconds": 1.0}], indirect=True)
def test_a_client_that_never_reads_its_answers_is_dropped(served: tuple[connections.Guard, int]) -> None:
    """Whole requests, answers never read: the answer's writing stays paused, and past ``write_seconds`` the
    connection is closed (it was held for as long as the client liked)."""
    guard, port = served
    readers = []
    for _ in range(3):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(WAIT)
        sock.connect(("127.0.0.1", port))
        sock.sendall(b"GET /big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 3)
        readers.append(sock)
    deadline = time.monotonic() + WAIT
    while guard.timed_out < len(readers):
        assert time.monotonic() < deadline, f"{guard.timed_out} of {len(readers)} unread connections closed"
        time.sleep(0.1)
    assert _get(port) == "ok"
    for sock in readers:
        sock.close()


@pytest.mark.parametrize("served", [{"per_address": 10}], indirect=True)
def test_connections_past_the_per_address_limit_are_refused_and_logged_once(
    served: tuple[connections.Guard, int], caplog: pytest.LogCaptureFixture
) -> None:
    guard, port = served
    caplog.set_level(logging.WARNING, logger="bourre.connections")
    held = [_slow(port) for _ in range(25)]
    deadline = time.monotonic() + WAIT
    while guard.refused < 15:
        assert time.monotonic() < deadline, f"{guard.refused} refused, {guard.open} open"
        time.sleep(0.02)
    closed = [s for s in held if _closed_by_server(s)]
    assert len(closed) == 15 and guard.open == 10
    lines = [r.getMessage() for r in caplog.records if r.name == "bourre.connections"]
    assert len(lines) == 1 and "refused connections from 127.0.0.1" in lines[0], lines
    for s in held:
        s.close()
    deadline = time.monotonic() + WAIT
    while guard.open:  # the server sees them close
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert _get(port) == "ok"


def test_a_run_out_of_file_descriptors_is_one_line_a_period(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="bourre.connections")
    guard = connections.Guard()
    loop = asyncio.new_event_loop()
    try:
        guard.quiet_accept_errors(loop)
        for _ in range(2048):  # what asyncio's accept loop reports for one backlog
            error = OSError(errno.EMFILE, "Too many open files")
            loop.call_exception_handler({"message": "socket.accept() out of system resource", "exception": error})
    finally:
        loop.close()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "Too many open files" in lines[0], lines


def test_the_open_file_limit_bounds_the_connections() -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert connections.fd_budget(10**9) <= soft - connections.BACKLOG - connections.FD_RESERVE
    assert connections.fd_budget(8) == 8


_SERVER = """
import resource, sys, threading
resource.setrlimit(resource.RLIMIT_NOFILE, ({limit}, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
sys.path.insert(0, {tests!r})
from test_connections import app
from train.web import connections
if not {budget}:  # as if the budget were wrong: the process runs out of descriptors and asyncio's accept fails
    connections.fd_budget = lambda wanted=0: wanted
guard = connections.Guard(max_connections=1000, per_address=1000, request_seconds=1.0)
config = connections.config(app(), guard=guard, host="127.0.0.1", port={port}, log_level="warning")
connections.Server(config).run()
"""


@pytest.mark.parametrize("budget", [True, False], ids=["within-the-budget", "out-of-descriptors"])
def test_a_flood_of_slow_connections_under_a_low_file_limit_leaves_a_small_log(budget: bool, tmp_path: Path) -> None:
    """1,024 open files in the probe; 256 here, and 400 slow connections: the server neither floods its log nor stops
    accepting, and answers a page once the slow connections are dropped."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = textwrap.dedent(_SERVER).format(limit=256, tests=str(Path(__file__).parent), budget=budget, port=port)
    log = tmp_path / "server.log"
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + WAIT
        while True:
            try:
                assert _get(port) == "ok"
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.1)
        slow = []
        for _ in range(400):
            try:
                slow.append(_slow(port))
            except OSError:  # the backlog is full: the server is not accepting now
                break
        time.sleep(3)  # the server refuses, drops or fails to accept them meanwhile
        for s in slow:
            s.close()
        deadline = time.monotonic() + WAIT
        while True:  # the accept loop works again
            try:
                assert _get(port) == "ok"
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
                time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(WAIT)
    text = log.read_text()
    assert "Traceback" not in text and len(text.splitlines()) <= 5, text[-3000:]
