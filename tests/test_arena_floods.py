"""What one client can make the event loop do (issue 61, point 3): requests and WebSocket handshakes are charged to
a budget per connection and per address before their work, a request over it is held (or refused, past the hold)
while other addresses are served, pings are charged to the address and parsed a slice at a time, and the
per-address connection limit is a knob of ``bourre arena serve``, its bad values refused in one line.

Clients here come from loopback addresses of their own (127.0.0.2, 127.0.0.3: Linux routes all of 127.0.0.0/8 to
the loopback); nothing asserts a duration beyond what the budgets themselves say, with wide margins."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the serve extra: pip install -e '.[serve]'")
pytest.importorskip("websockets", reason="the arena extra: pip install -e '.[arena]'")

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import PlainTextResponse, Response  # noqa: E402
from starlette.routing import Route, WebSocketRoute  # noqa: E402
from starlette.websockets import WebSocket  # noqa: E402

from train.web import connections  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="clients from 127.0.0.2 (Linux)")

ROOT = Path(__file__).resolve().parent.parent
WAIT = 60.0
FLOODER = "127.0.0.2"


async def _page(request: Request) -> Response:
    return PlainTextResponse("ok")


async def _quiet(ws: WebSocket) -> None:
    await ws.accept()
    while (await ws.receive())["type"] != "websocket.disconnect":
        pass


def _serve(guard: connections.Guard, ws: Any = "auto") -> tuple[connections.Server, threading.Thread, int]:
    app = Starlette(routes=[Route("/", _page), WebSocketRoute("/bot", _quiet)])
    config = connections.config(app, guard=guard, host="127.0.0.1", port=0, log_level="warning", ws=ws)
    server = connections.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    return server, thread, server.servers[0].sockets[0].getsockname()[1]


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[tuple[connections.Guard, int]]:
    """A guarded server in a thread (``request.param``: the guard's arguments): its guard and its port."""
    guard = connections.Guard(**getattr(request, "param", {}))
    server, thread, port = _serve(guard)
    yield guard, port
    server.should_exit = True
    thread.join(WAIT)


def _connect_from(address: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((address, 0))
    sock.settimeout(WAIT)
    sock.connect(("127.0.0.1", port))
    return sock


def _pipeline(sock: socket.socket, port: int, count: int) -> None:
    sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode() * count)


def _is_served(sock: socket.socket, port: int) -> bool:
    """Whether a GET on ``sock`` is answered: a connection the guard closed unread answers nothing (a reset, an end
    of file, or a send that fails), where an open one waiting for its request answers it."""
    try:
        _pipeline(sock, port, 1)
    except OSError:
        return False
    return _answers_within(sock, WAIT / 4, b"HTTP/1.1 ", 1).startswith(b"HTTP/1.1 ")


def _answers_within(sock: socket.socket, seconds: float, enough: bytes | None = None, count: int = 0) -> bytes:
    """What ``sock`` receives in ``seconds``, less if the server closes it or once ``enough`` has come ``count``
    times."""
    got = b""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0 and (enough is None or got.count(enough) < count):
        sock.settimeout(left)
        try:
            chunk = sock.recv(1 << 16)
        except TimeoutError:
            break
        except ConnectionResetError:  # closed unread: a reset
            break
        if not chunk:
            break
        got += chunk
    return got


@pytest.mark.parametrize("served", [{"address_rate": 10.0, "request_rate": 100.0}], indirect=True)
def test_a_client_over_its_address_budget_is_held_while_another_address_is_served(
    served: tuple[connections.Guard, int],
) -> None:
    guard, port = served
    flooder = _connect_from(FLOODER, port)
    try:
        _pipeline(flooder, port, 60)  # a bucket of 20 (2 s at 10 a second), then 10 a second
        first = _answers_within(flooder, 0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=WAIT) as answer:  # another address
            assert answer.status == 200 and answer.read() == b"ok"  # now, as the flooder waits its turn
        served_early = first.count(b"HTTP/1.1 200")
        assert 20 <= served_early <= 20 + 10, served_early  # the burst at once, then the rate: 5 more in 0.5 s
        assert b"HTTP/1.1 429" not in first  # held, not refused: its turn comes
        rest = _answers_within(flooder, WAIT / 2, b"HTTP/1.1 200", 60 - served_early)
        assert served_early + rest.count(b"HTTP/1.1 200") == 60  # every one served in the end
        assert guard.throttled >= 30
    finally:
        flooder.close()


@pytest.mark.parametrize("served", [{"address_rate": 100.0, "request_rate": 5.0}], indirect=True)
def test_one_connection_is_held_to_its_own_budget_under_its_address_budget(
    served: tuple[connections.Guard, int],
) -> None:
    _, port = served
    busy, calm = _connect_from(FLOODER, port), _connect_from(FLOODER, port)
    try:
        _pipeline(busy, port, 30)  # a bucket of 10, then 5 a second
        got = _answers_within(busy, 1.0, b"HTTP/1.1 200", 30)
        assert 10 <= got.count(b"HTTP/1.1 200") <= 10 + 8
        _pipeline(calm, port, 1)  # the same address, another connection: its own bucket is full
        assert _answers_within(calm, WAIT / 4, b"HTTP/1.1 200", 1).count(b"HTTP/1.1 200") == 1
    finally:
        busy.close()
        calm.close()


@pytest.mark.parametrize("served", [{"address_rate": 1.0, "hold_seconds": 0.5}], indirect=True)
def test_a_request_that_would_be_held_past_the_hold_is_refused_429_and_its_connection_closed(
    served: tuple[connections.Guard, int],
) -> None:
    _, port = served
    sock = _connect_from(FLOODER, port)
    try:
        _pipeline(sock, port, 10)  # a bucket of 2, the 3rd due in 1 s: past the hold
        got = _answers_within(sock, WAIT / 4)  # ends when the server closes the connection
        assert got.count(b"HTTP/1.1 200") == 2 and got.count(b"HTTP/1.1 429") == 1, got[-400:]
        refusal = got[got.index(b"HTTP/1.1 429") :].lower()
        assert b"retry-after: 1\r\n" in refusal and b"connection: close" in refusal
    finally:
        sock.close()


def _handshake(port: int) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    return (
        f"GET /bot HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode()


def _upgraded(sock: socket.socket, port: int) -> None:
    sock.sendall(_handshake(port))
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        assert chunk, "closed before the handshake's answer"
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 101"), answer


PING = b"\x89\x80\x00\x00\x00\x00"  # a client's ping: masked (RFC 6455), empty


def _text_frame(text: str) -> bytes:
    """A client's text frame: masked, with the zero key (so the payload reads as sent)."""
    payload = text.encode()
    assert len(payload) < 126
    return bytes((0x81, 0x80 | len(payload))) + b"\0\0\0\0" + payload


@pytest.mark.parametrize("welcomed", [False, True], ids=["before its hello", "after its welcome"])
def test_a_read_full_of_pings_is_parsed_only_up_to_the_cut_off(
    arena_server: Any, monkeypatch: pytest.MonkeyPatch, welcomed: bool
) -> None:
    from arena_helpers import hello

    from train.arena import bot_socket

    seen = []
    answer = bot_socket.BotSocketProtocol.handle_ping

    def counted(self: Any) -> None:
        seen.append(1)
        answer(self)

    monkeypatch.setattr(bot_socket.BotSocketProtocol, "handle_ping", counted)
    port = arena_server.port
    sock = _connect_from(FLOODER, port)
    try:
        _upgraded(sock, port)
        if welcomed:
            name, token = arena_server.new_bot()
            sock.sendall(_text_frame(json.dumps(hello(name, token))))
            assert b"welcome" in _answers_within(sock, WAIT / 4, b"welcome", 1)
            arena_server.wait_connected(name)
        sock.sendall(PING * 5000)  # one write: a read or two of the server's
        rest = _answers_within(sock, WAIT / 4)  # ends when the server cuts the connection off
    finally:
        sock.close()
    bucket = 4 * bot_socket.MAX_PINGS
    # each read was parsed whole before: all 5000 pings handled after the cut-off; now a slice at most past it
    assert bucket < len(seen) <= bucket + 1 + bot_socket.FEED_BYTES // len(PING), len(seen)
    assert rest.count(b"\x8a\x00") <= bucket  # no pong past the bucket


@pytest.fixture
def arena_server(tmp_path: Path) -> Iterator[Any]:
    pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")
    from arena_helpers import Server

    server = Server(tmp_path)
    yield server
    server.close()


def test_pings_are_charged_to_their_address() -> None:
    from train.arena.bot_socket import BotSocketProtocol

    guard = connections.Guard(address_rate=5.0)  # a bucket of 10: handshakes and pings together
    server, thread, port = _serve(guard, ws=BotSocketProtocol)
    socks = []
    try:
        for _ in range(3):
            sock = _connect_from(FLOODER, port)
            socks.append(sock)
            _upgraded(sock, port)  # 3 handshakes: 7 tokens left for the pings of all three
        for sock in socks:
            sock.sendall(PING * 4)  # under the protocol's own bucket of a connection (20)
        cut = sum(1 for sock in socks if _answers_within(sock, 2.0).count(b"\x8a\x00") < 4)
        assert cut >= 1 and guard.throttled >= 1  # 12 pings against 7 tokens (and 1 a second more)
    finally:
        for sock in socks:
            sock.close()
        server.should_exit = True
        thread.join(WAIT)


def test_a_websocket_handshake_over_its_address_budget_is_held_then_answered() -> None:
    from train.arena.bot_socket import BotSocketProtocol

    guard = connections.Guard(address_rate=1.0)  # a bucket of 2, then one a second
    server, thread, port = _serve(guard, ws=BotSocketProtocol)
    socks = [_connect_from(FLOODER, port) for _ in range(3)]
    try:
        for sock in socks[:2]:
            _upgraded(sock, port)
        third = socks[2]
        third.sendall(_handshake(port))
        assert _answers_within(third, 0.3) == b""  # held: its turn is a second away
        answer = _answers_within(third, WAIT / 4, b"\r\n\r\n", 1)
        assert answer.startswith(b"HTTP/1.1 101"), answer  # then upgraded, not refused
        assert guard.throttled == 1
    finally:
        for sock in socks:
            sock.close()
        server.should_exit = True
        thread.join(WAIT)


def test_the_per_address_limit_is_a_default_a_guard_made_later_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connections, "_default_per_address", connections.MAX_CONNECTIONS_PER_ADDRESS)
    connections.set_default_per_address(200)
    guard = connections.Guard()
    assert guard.per_address == 200
    assert guard.address_rate == connections.ADDRESS_REQUESTS_PER_SECOND * 200 / 64  # a proxy's clients share it
    assert connections.Guard(per_address=3).per_address == 3
    for bad in (0, -1, connections.MAX_CONNECTIONS + 1, True, 2.5):
        with pytest.raises(ValueError, match="--max-connections-per-address"):
            connections.set_default_per_address(bad)  # type: ignore[arg-type]
    assert connections.Guard().per_address == 200


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _bourre(*args: str, timeout: float = WAIT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "train.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )


@pytest.mark.parametrize(
    ("value", "why"),
    [("0", "from 1 to"), ("-3", "from 1 to"), ("100000", "from 1 to"), ("x", "invalid int value")],
)
def test_a_bad_connection_limit_is_refused_in_one_line(tmp_path: Path, value: str, why: str) -> None:
    pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")
    port = str(_free_port())
    done = _bourre("arena", "serve", "--data", str(tmp_path), "--port", port, "--max-connections-per-address", value)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "--max-connections-per-address" in last and why in last
    assert not (tmp_path / "arena.sqlite3").exists()  # refused before the server's start


def test_every_server_process_holds_the_connection_limit_it_was_given(tmp_path: Path) -> None:
    """With ``--processes 2`` each child builds its guard from the settings it is handed: two children allow at most
    2 x 2 connections from one address, so of five at least one is closed unread (with the default, 64 each, none)."""
    pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")
    port = _free_port()
    command = [sys.executable, "-m", "train.cli", "arena", "serve", "--data", str(tmp_path), "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--processes", "2", "--max-connections-per-address", "2"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    held: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 2 * WAIT
        while True:
            try:
                probe = _connect_from("127.0.0.3", port)
                _pipeline(probe, port, 1)
                if _answers_within(probe, WAIT / 4, b"HTTP/1.1 ", 1).startswith(b"HTTP/1.1 "):
                    probe.close()
                    break
                probe.close()
            except OSError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "the servers did not start"
            time.sleep(0.2)
        time.sleep(1.0)  # both children listening, not only the first
        held = [_connect_from(FLOODER, port) for _ in range(5)]
        served = [_is_served(sock, port) for sock in held]
        assert 1 <= served.count(True) <= 4 and not all(served), (
            "five connections from one address stayed open under a limit of two per process"
        )
    finally:
        for sock in held:
            sock.close()
        process.terminate()
        process.wait(WAIT)


def test_the_served_arena_holds_the_connection_limit_it_was_given(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")
    port = _free_port()
    command = [sys.executable, "-m", "train.cli", "arena", "serve", "--data", str(tmp_path), "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--max-connections-per-address", "2", "--token-file", str(tmp_path / "op.token")],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    held: list[socket.socket] = []
    try:
        deadline = time.monotonic() + WAIT
        while True:
            try:
                held.append(_connect_from(FLOODER, port))
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        held.append(_connect_from(FLOODER, port))
        third = _connect_from(FLOODER, port)  # accepted by the kernel, closed unread by the guard
        held.append(third)
        assert not _is_served(third, port)  # closed unread, not left open
        other = _connect_from("127.0.0.3", port)  # another address has its own two
        held.append(other)
        _pipeline(other, port, 1)
        assert _answers_within(other, WAIT / 4, b"HTTP/1.1 ", 1).startswith(b"HTTP/1.1 ")
    finally:
        for sock in held:
            sock.close()
        process.terminate()
        process.wait(WAIT)
