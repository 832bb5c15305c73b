"""A scripted WebSocket server on 127.0.0.1 (an ephemeral port) that plays an arena server badly on purpose, for the
tests of the client (``tests/test_arena_client.py``, ``tests/test_arena_connect.py``).

Each connection runs the next script of the list (the last one again once the list is spent); a script is a
coroutine given the connection and the server, and every text the client sends is kept in ``received``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

pytest.importorskip("websockets", reason="the arena extra: pip install -e '.[arena]'")

from websockets.asyncio.server import ServerConnection, serve  # noqa: E402

Script = Callable[[ServerConnection, "HostileServer"], Awaitable[None]]

WELCOME = {"type": "welcome", "protocol": 1, "name": "alice"}
MATCH_END = {"type": "match_end", "match": "m", "status": "finished", "results": []}


def turn(number: int, **fields: Any) -> dict[str, Any]:
    """A well-formed turn (with the observation a bot may ask for), ``fields`` replacing or adding fields."""
    message = {
        "type": "turn",
        "match": "m",
        "turn": number,
        "deal": 0,
        "seat": 0,
        "clock_ms": 2000,
        "view": {},
        "legal": [{"action": 52, "text": "pass"}, {"action": 53, "text": "play, stand pat"}],
    }
    message["observation"] = [0.0] * 4
    message.update(fields)
    return message


class HostileServer:
    def __init__(self, scripts: list[Script]) -> None:
        self.scripts = scripts
        self.connections = 0
        self.received: list[str] = []
        self.actions: list[dict[str, Any]] = []
        self.got_action = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._main(),), daemon=True)
        self.thread.start()
        self.ready.wait(60)
        self.url = f"ws://127.0.0.1:{self.port}/bot"

    async def _main(self) -> None:
        self.stop = asyncio.Event()
        async with serve(self._handle, "127.0.0.1", 0, max_size=2**16, compression=None) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            self.ready.set()
            await self.stop.wait()

    async def _handle(self, ws: ServerConnection) -> None:
        script = self.scripts[min(self.connections, len(self.scripts) - 1)]
        self.connections += 1
        with contextlib.suppress(Exception):  # the client went away mid-script: the next connection, the next script
            await script(ws, self)

    async def receive(self, ws: ServerConnection) -> dict[str, Any]:
        text = await ws.recv()
        assert isinstance(text, str)
        self.received.append(text)
        message: dict[str, Any] = json.loads(text)
        if message.get("type") == "action":
            self.actions.append(message)
            self.got_action.set()
        return message

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(60)


def sends(*messages: Any, then_close: bool = True, read_actions: bool = False) -> Script:
    """A script: read the hello, send each message (a dict as JSON, a str or bytes as it is), read the actions that
    come back when ``read_actions`` (until the client closes), then close (``then_close``) or wait for the
    client to."""

    async def script(ws: ServerConnection, server: HostileServer) -> None:
        await server.receive(ws)  # the hello
        for message in messages:
            await ws.send(json.dumps(message) if isinstance(message, dict) else message)
        if read_actions:
            while True:
                await server.receive(ws)
        if then_close:
            await ws.close()
        else:  # open until the client closes it (or the server stops)
            await ws.wait_closed()

    return script


def refuses(reason: str | None, message: str = "refused") -> Script:
    """A script: a fatal error (with ``reason``, or none as an older server sends it), then the close."""
    error: dict[str, Any] = {"type": "error", "message": message, "fatal": True, "turn": None}
    if reason is not None:
        error["reason"] = reason
    return sends(error)
