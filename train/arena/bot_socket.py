"""The arena's WebSocket protocol: uvicorn's sans-I/O one (``websockets`` underneath) over a leaner transport.

uvicorn's protocol writes every frame with its own ``transport.write`` (one ``send`` system call each when the
socket's buffer is empty), and pauses reading after every message it hands the application, resuming as soon as the
application takes it (two ``epoll_ctl`` calls a message). At the arena's rate (thousands of small messages a second,
all on one event loop) those system calls were a fifth of the server's CPU. ``BotSocketProtocol`` hands uvicorn's
protocol a ``BatchingTransport`` instead, which changes neither what is sent nor in what order:

* writes made in one turn of the event loop go out in one ``send`` at the end of that turn (``loop.call_soon``): a
  game's ``deal_end``, the next ``deal_start`` and a turn for the same bot leave as one write, and a write is never
  held past the loop's current turn, so no latency is added;
* a pause of reading is applied at the end of the turn too, and only if the application has not taken the message
  by then: when the application keeps up, as it does when its reader awaits the next message, reading is never
  paused, and when it does not, the back-pressure is uvicorn's, as before.

Everything else is the real transport's (closing flushes what is pending first).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

__all__ = ["EXTENSION", "FEED_BYTES", "MAX_PINGS", "BatchingTransport", "BotSocketProtocol", "text_frame"]

log = logging.getLogger("bourre.arena")


def text_frame(payload: bytes) -> bytes:
    """One unfragmented, unmasked text frame of ``payload`` (RFC 6455, 5.2), as a server sends it: what
    ``websockets``' protocol writes for ``send_text`` without per-message compression, in one step instead of its
    frame objects (a tenth of the server's CPU at the arena's rate)."""
    size = len(payload)
    if size < 126:
        return bytes((0x81, size)) + payload
    if size < 1 << 16:
        return bytes((0x81, 126)) + size.to_bytes(2, "big") + payload
    return bytes((0x81, 127)) + size.to_bytes(8, "big") + payload


class BatchingTransport:
    """A transport whose writes of one event-loop turn go out as one, and whose read pauses wait for that turn's end;
    every other attribute is ``transport``'s."""

    def __init__(
        self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop, max_buffered: int = 1 << 62
    ) -> None:
        self._transport = transport
        self._loop = loop
        self._max_buffered = max_buffered
        self._pending: list[bytes] = []
        self._pause_wanted = False
        self._paused = False
        self._pause_scheduled = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def _flush(self) -> None:
        if not self._pending:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        self._pending = []
        if not self._transport.is_closing():
            self._transport.write(data)
            # every frame passes here, the pongs uvicorn writes for a peer's pings too: a peer that sends pings and
            # reads nothing would otherwise grow the buffer without bound, and hold its connection open
            if self._transport.get_write_buffer_size() > self._max_buffered:
                log.warning("a peer left more than %d bytes unread: its connection is cut off", self._max_buffered)
                self.abort()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._pending))

    def pause_reading(self) -> None:
        self._pause_wanted = True
        if not self._pause_scheduled:
            self._pause_scheduled = True
            self._loop.call_soon(self._apply_pause)

    def _apply_pause(self) -> None:
        self._pause_scheduled = False
        if self._pause_wanted and not self._paused and not self._transport.is_closing():
            self._paused = True
            self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._pause_wanted = False
        if self._paused:
            self._paused = False
            if not self._transport.is_closing():
                self._transport.resume_reading()

    def is_reading(self) -> bool:
        return not self._paused and self._transport.is_reading()

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._pending = []
        self._transport.abort()


MAX_PINGS = 5.0
"""Ping frames a second a peer may send, on average (a bucket of ``4 * MAX_PINGS``), before or after its hello; past
it the connection is cut off. WebSocket libraries ping every few seconds at most: four connections writing pings as
fast as they could once took a 200-deal match from 5 s to 122 s, each ping a pong the event loop wrote."""

FEED_BYTES = 256
"""The most bytes of a read handed to the WebSocket parser at once. ``websockets`` parses all it is given, and queues a
pong for every ping in it, before the protocol sees the first frame: a 64 KiB read of pings was some ten thousand frames
parsed and pongs framed past ``MAX_PINGS`` before the cut-off took effect. A slice holds at most 42 pings; a bot's
messages are shorter than a slice, mostly."""

EXTENSION = "bourre.bot_socket"
"""The key of the ASGI scope's ``extensions`` under which ``BotSocketProtocol`` offers itself to the application."""


class BotSocketProtocol(WebSocketsSansIOProtocol):  # type: ignore[misc]
    """uvicorn's sans-I/O WebSocket protocol on a ``BatchingTransport``, with a direct mode for the application.

    The protocol puts itself in the connection's ASGI scope (``scope["extensions"][EXTENSION]``). An application
    that finds it there may, once its handshake is done, call ``direct(on_message)``: from then on every message the
    peer sends is handed to ``on_message`` (text as ``str``, binary as ``bytes``) in the event loop's reading turn,
    without the ASGI queue, and ``send_now`` frames and writes a text message without awaiting anything. A turn's
    answer thus reaches its table with no task of the connection in between, and a turn leaves without one. Closing
    frames, pings and the connection's loss still come through ASGI (``receive`` gives ``websocket.disconnect``).
    A peer that leaves more than ``max_buffered`` bytes unread (messages, pongs, anything written) is cut off: the
    server does not hold bytes without bound for a bot that does not read them."""

    max_buffered = 4 * 1024 * 1024

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._on_message: Callable[[str | bytes], None] | None = None
        self._pings = 4 * MAX_PINGS  # the bucket of pings this peer may still send
        self._pinged_at = 0.0

    def handle_ping(self) -> None:
        """A ping answered while the peer's bucket lasts (``MAX_PINGS``); past it the connection is cut off, its pong
        unwritten: the cost of a flood of control frames is charged before the work."""
        now = self.loop.time()
        self._pings = min(4 * MAX_PINGS, self._pings + (now - self._pinged_at) * MAX_PINGS) - 1
        self._pinged_at = now
        if self._pings < 0:
            if not self.transport.is_closing():
                log.warning("a peer sent more than %g pings a second: its connection is cut off", MAX_PINGS)
                self.transport.abort()
            return
        super().handle_ping()

    def data_received(self, data: bytes) -> None:
        """``data`` parsed ``FEED_BYTES`` at a time, and no more of it once the connection is cut off."""
        if len(data) <= FEED_BYTES:
            super().data_received(data)
            return
        view = memoryview(data)
        for start in range(0, len(data), FEED_BYTES):
            if self.transport.is_closing():
                return
            super().data_received(bytes(view[start : start + FEED_BYTES]))

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        batching = BatchingTransport(transport, self.loop, self.max_buffered)  # type: ignore[arg-type]
        super().connection_made(batching)  # type: ignore[arg-type]

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # set only when the upgrade was accepted
        if scope is not None:
            scope.setdefault("extensions", {})[EXTENSION] = self

    def direct(self, on_message: Callable[[str | bytes], None]) -> None:
        """Hand every later message of the peer to ``on_message`` as it is read."""
        self._on_message = on_message

    def send_receive_event_to_app(self) -> None:
        on_message = self._on_message
        if on_message is None:
            super().send_receive_event_to_app()
            return
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        if self.close_sent:
            return
        if self.curr_msg_data_type == "text":
            try:
                text = data.decode()
            except UnicodeDecodeError:  # as uvicorn answers it: close code 1007
                self.conn.send_close(1007)
                self.handle_parser_exception()
                return
            on_message(text)
        else:
            on_message(data)

    def send_now(self, text: str) -> bool:
        """Send one text message now (written at the end of the loop's turn); False once the connection is closing
        or closed (the message is dropped: the reader sees the disconnect)."""
        if self.close_sent or self.disconnected or not self.handshake_complete or self.transport.is_closing():
            return False
        if self.conn.state is not State.OPEN:  # the peer's close came in this turn
            return False
        if self.conn.extensions:  # per-message compression (the arena turns it off): websockets frames it
            self.conn.send_text(text.encode())
            self.transport.write(b"".join(self.conn.data_to_send()))
        else:
            self.transport.write(text_frame(text.encode()))
        if self.transport.get_write_buffer_size() > self.max_buffered:
            self.logger.warning("a bot left more than %d bytes unread: its connection is closed", self.max_buffered)
            self.transport.abort()
            return False
        return True
