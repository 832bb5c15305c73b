"""The arena's WebSocket protocol (``train.arena.bot_socket``): its frames, its batched writes and lazy read pauses,
the plain-action reader of ``protocol.parse_client``, and the same match over uvicorn's plain ASGI path."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_helpers import WAIT, Recorder, Server, arena_server, start  # noqa: F401 (the fixture 'server')

from train.arena import protocol
from train.arena.bot_socket import BatchingTransport, text_frame

frames = pytest.importorskip("websockets.frames", reason="the arena extra: pip install -e '.[arena]'")


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65_535, 65_536, 70_000])
def test_a_text_frame_is_the_one_websockets_writes(size: int) -> None:
    payload = bytes(range(97, 123)) * (size // 26) + b"a" * (size % 26)
    assert text_frame(payload) == frames.Frame(frames.Opcode.TEXT, payload).serialize(mask=False)


class FakeTransport:
    """Records what a ``BatchingTransport`` hands down."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.calls: list[str] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closing

    def pause_reading(self) -> None:
        self.calls.append("pause")

    def resume_reading(self) -> None:
        self.calls.append("resume")

    def is_reading(self) -> bool:
        return "pause" not in self.calls[-1:]

    def get_write_buffer_size(self) -> int:
        return 0

    def close(self) -> None:
        self.calls.append("close")
        self.closing = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 1)}.get(name, default)


class Unread(FakeTransport):
    """A socket whose peer reads nothing: everything written stays in its buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.aborted = False

    def get_write_buffer_size(self) -> int:
        return sum(map(len, self.writes))

    def abort(self) -> None:
        self.aborted = self.closing = True


def test_the_writes_of_one_loop_turn_go_out_as_one() -> None:
    async def run() -> FakeTransport:
        fake = FakeTransport()
        batching = BatchingTransport(fake, asyncio.get_running_loop())  # type: ignore[arg-type]
        batching.write(b"one ")
        batching.write(b"two ")
        batching.writelines([b"three"])
        assert fake.writes == [] and batching.get_write_buffer_size() == 13  # not yet: at the end of the turn
        await asyncio.sleep(0)
        assert fake.writes == [b"one two three"]
        batching.write(b"four")
        await asyncio.sleep(0)
        batching.write(b"five")
        batching.close()  # what is pending goes out before the close
        assert batching.get_extra_info("peername") == ("127.0.0.1", 1)  # the rest is the transport's
        return fake

    fake = asyncio.run(run())
    assert fake.writes == [b"one two three", b"four", b"five"] and fake.calls == ["close"]


def test_reading_pauses_only_when_the_application_falls_behind() -> None:
    async def run() -> FakeTransport:
        fake = FakeTransport()
        batching = BatchingTransport(fake, asyncio.get_running_loop())  # type: ignore[arg-type]
        batching.pause_reading()
        batching.resume_reading()  # the application took the message in the same turn: no system call at all
        await asyncio.sleep(0)
        assert fake.calls == []
        batching.pause_reading()  # not taken by the end of the turn: paused for real, then resumed
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert fake.calls == ["pause"] and not batching.is_reading()
        batching.resume_reading()
        assert batching.is_reading()
        return fake

    assert asyncio.run(run()).calls == ["pause", "resume"]


def _strict(text: str) -> protocol.Action | str:
    """What ``parse_client`` gives ``text`` with its plain-action reader turned off."""
    plain, protocol._PLAIN_ACTION = protocol._PLAIN_ACTION, __import__("re").compile("(?!)")  # type: ignore[attr-defined]
    try:
        return protocol.parse_client(text)  # type: ignore[return-value]
    except protocol.ProtocolError as err:
        return str(err)
    finally:
        protocol._PLAIN_ACTION = plain  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "text",
    [
        '{"type":"action","turn":1,"action":52}',
        ' {\n\t"type" : "action" ,\r"turn": 12345 , "action":0 } \n',
        '{"type":"action","turn":9007199254740991,"action":1}',
        '{"type":"action","turn":9007199254740992,"action":1}',  # past 2**53 - 1
        '{"type":"action","turn":01,"action":1}',  # not JSON
        '{"type":"action","turn":-1,"action":1}',
        '\u00a0{"type":"action","turn":1,"action":1}',  # a space, but not JSON's
        '{"type":"action","turn":1,"action":1,"turn":2}',  # a key twice
        '{"type":"action","action":1,"turn":2}',  # another order: the JSON parser reads it
        '{"type":"action","turn":1.0,"action":1}',
        '{"type":"action","turn":1,"action":1}x',
    ],
)
def test_the_plain_action_reader_agrees_with_the_json_parser(text: str) -> None:
    try:
        fast: protocol.Action | str = protocol.parse_client(text)  # type: ignore[assignment]
    except protocol.ProtocolError as err:
        fast = str(err)
    assert fast == _strict(text)


@pytest.fixture(scope="module", name="plain_server")
def plain_asgi_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The arena on uvicorn's own sans-I/O WebSocket protocol: messages through ASGI and a writer task, as under any
    other ASGI server."""
    server = Server(Path(tmp_path_factory.mktemp("arena")), ws="websockets-sansio")
    yield server
    server.close()


def test_a_match_over_the_plain_asgi_path_tells_the_bots_the_same(plain_server: Server, tmp_path: Path) -> None:
    fast = Server(tmp_path / "fast")
    try:
        told = []
        for server in (plain_server, fast):
            bots = []
            for name in ("alice", "bob"):
                token = server.store.add_bot(name)
                bot = Recorder()
                bots.append((bot, start(bot, server, name, token)))
            server.wait_connected("alice", "bob")
            server.arena.draw_secret = lambda: "ab" * 32  # the same deals on both servers
            status, answer = server.match({"seats": ["bot:alice", "heuristic", "bot:bob"], "deals": 3})
            assert status == 200, answer
            for _, thread in bots:
                thread.join(WAIT)
            told.append([json.dumps(m, sort_keys=True) for bot, _ in bots for m in bot.messages if "match" in m])
        plain, direct = told
        assert len(plain) > 20
        assert [m.replace(json.loads(m)["match"], "M") for m in plain] == [
            m.replace(json.loads(m)["match"], "M") for m in direct
        ]
    finally:
        fast.close()


def test_a_peer_that_leaves_too_much_unread_is_cut_off() -> None:
    from uvicorn.config import Config
    from uvicorn.server import ServerState
    from websockets.protocol import State

    from train.arena.bot_socket import BotSocketProtocol

    async def app(scope: Any, receive: Any, send: Any) -> None:
        return None

    async def run() -> tuple[Unread, list[bool]]:
        config = Config(app, ws_max_size=4096, ws_per_message_deflate=False)
        config.load()
        socket = BotSocketProtocol(config, ServerState(), {}, asyncio.get_running_loop())
        socket.max_buffered = 10_000
        unread = Unread()
        socket.connection_made(unread)  # type: ignore[arg-type]
        socket.handshake_complete = True
        socket.conn.state = State.OPEN
        sent = []
        for _ in range(8):
            sent.append(socket.send_now("x" * 2000))
            await asyncio.sleep(0)  # the turn ends: what was written goes to the socket
        return unread, sent

    unread, sent = asyncio.run(run())
    assert unread.aborted and sent[:4] == [True] * 4 and sent[-1] is False
    assert sum(map(len, unread.writes)) < 12_000  # nothing written once it was cut off


def test_a_written_frame_past_the_unread_limit_cuts_the_peer_off() -> None:
    """Every write counts, not only ``send_now``'s: the pongs uvicorn writes for a peer's pings too."""

    async def run() -> Unread:
        unread = Unread()
        batching = BatchingTransport(unread, asyncio.get_running_loop(), max_buffered=1000)  # type: ignore[arg-type]
        for _ in range(20):
            batching.write(b"\x8a\x7d" + b"p" * 125)  # a pong of 125 bytes, as uvicorn writes it
            await asyncio.sleep(0)
        return unread

    unread = asyncio.run(run())
    assert unread.aborted and sum(map(len, unread.writes)) < 1300


def test_a_peer_that_pings_and_never_reads_is_cut_off(server: Server) -> None:
    """No hello, pings for a while, nothing ever read: its pongs pile up in the server until it is cut off (it was held
    open, its buffer growing, for as long as it liked: the refusal for its missing hello waited on a send that never
    drained, and a close waits for the buffer to drain)."""
    import socket
    import time

    guard = server.uvicorn.config.guard
    before = guard.open
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(
        f"GET /bot HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    assert sock.recv(4096).startswith(b"HTTP/1.1 101")
    assert guard.open == before + 1
    ping = b"\x89\xfd\x00\x00\x00\x00" + b"p" * 125  # masked with a zero key, as a client must mask
    sock.settimeout(1.0)
    flood_until = time.monotonic() + 3.0
    try:
        while time.monotonic() < flood_until:
            sock.sendall(ping * 512)
    except OSError:  # the server stopped reading (or cut it off)
        pass
    deadline = time.monotonic() + WAIT
    try:
        while guard.open > before:  # never read: the server must let go by itself
            assert time.monotonic() < deadline, "a peer that never reads is still held"
            time.sleep(0.1)
    finally:
        sock.close()
