"""The connection guard of both web servers (``bourre serve``, ``bourre arena serve``): what a client may hold open.

================================ ========= ==========================================================================
``REQUEST_SECONDS``              10 s      a connection that has not sent a whole request (its headers, and its body
                                           up to the length it declared) this long after it opened, or after the
                                           previous answer, is closed: a client that trickles a header a byte at a
                                           time holds nothing for long
``WRITE_SECONDS``                30 s      a connection whose answers the client leaves unread this long (the
                                           server's send buffer full, writing paused) is closed: a client that sends
                                           requests and never reads the answers holds nothing for long
``MAX_CONNECTIONS``              512       connections open at once, in all (HTTP and WebSocket); lowered to fit the
                                           process's open-file limit (``fd_budget``)
``MAX_CONNECTIONS_PER_ADDRESS``  64        connections open at once from one client address
``BACKLOG``                      128       connections the kernel queues before the server accepts them, and the most
                                           the event loop accepts in one go
``LOG_SECONDS``                  60 s      a refused address (or a run out of file descriptors) is logged once in
                                           this period, with the count of refusals since
================================ ========= ==========================================================================

A connection past a limit is closed as soon as it is accepted, unread. A WebSocket (an arena bot) counts as one
connection for as long as it is open, and no request timeout applies to it once upgraded: the application bounds its
hello (``train.arena.server.HELLO_SECONDS``) and uvicorn pings it. Behind a proxy every client has the proxy's address:
raise the per-address limit there.

Why uvicorn's protocol classes, subclassed, rather than a guard around the listening socket: the request timeout
needs to know where a request ends, which only the HTTP parser knows, and uvicorn takes its HTTP and WebSocket
protocol classes as arguments (``uvicorn.Config(http=..., ws=...)``). ``config`` builds a ``uvicorn.Config`` with
them; ``Server`` (a ``uvicorn.Server``) also keeps the event loop's accept loop quiet when the process runs out of
file descriptors: asyncio then logs a traceback for each try of a whole backlog, every second (a flood of megabytes a
minute), where this logs one line a period. The open-file budget keeps that from happening in the first place:
``MAX_CONNECTIONS`` is lowered so that the connections, one backlog of accepts and ``FD_RESERVE`` descriptors for the
database and files fit under the soft ``RLIMIT_NOFILE``.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import time
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any, cast

import uvicorn

__all__ = [
    "BACKLOG",
    "FD_RESERVE",
    "LOG_SECONDS",
    "MAX_CONNECTIONS",
    "MAX_CONNECTIONS_PER_ADDRESS",
    "REQUEST_SECONDS",
    "WRITE_SECONDS",
    "Guard",
    "Server",
    "config",
    "fd_budget",
]

log = logging.getLogger("bourre.connections")

REQUEST_SECONDS = 10.0
"""A whole request (headers and body) within this many seconds of the connection's start or of the previous answer."""
WRITE_SECONDS = 30.0
"""An answer's writing, once paused by a full send buffer, resumes within this many seconds, or the connection is
closed (a client that never reads)."""
MAX_CONNECTIONS = 512
"""Connections open at once, in all (lowered to what the open-file limit allows: ``fd_budget``)."""
MAX_CONNECTIONS_PER_ADDRESS = 64
"""Connections open at once from one client address."""
BACKLOG = 128
"""The listening socket's backlog, which is also the most connections the event loop accepts in one go."""
FD_RESERVE = 128
"""File descriptors kept free for everything but connections: the database, files served, the listening sockets."""
LOG_SECONDS = 60.0
"""A refused address, or a run out of file descriptors, is logged once in this period."""
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


def fd_budget(wanted: int = MAX_CONNECTIONS) -> int:
    """``wanted``, lowered so that that many connections, a backlog of accepts and ``FD_RESERVE`` fit under the soft
    open-file limit (at least 8)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # not a Unix
        return wanted
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(8, min(wanted, soft - BACKLOG - FD_RESERVE))


class Guard:
    """The connections of one server: counted in all and by address, refused past the limits, each given
    ``request_seconds`` to send a whole request and ``write_seconds`` to take an answer whose writing is paused.
    ``refused`` and ``timed_out`` count since it was made."""

    def __init__(
        self,
        max_connections: int = MAX_CONNECTIONS,
        per_address: int = MAX_CONNECTIONS_PER_ADDRESS,
        request_seconds: float = REQUEST_SECONDS,
        log_seconds: float = LOG_SECONDS,
        write_seconds: float = WRITE_SECONDS,
    ) -> None:
        self.max_connections = fd_budget(max_connections)
        self.per_address = per_address
        self.request_seconds = request_seconds
        self.write_seconds = write_seconds
        self.log_seconds = log_seconds
        self.refused = 0
        self.timed_out = 0
        self._open: dict[Any, str] = {}  # transport -> client address
        self._by_address: Counter[str] = Counter()
        self._logged: dict[str, tuple[float, int]] = {}  # what -> (when logged, refusals since)

    @property
    def open(self) -> int:
        return len(self._open)

    def admit(self, transport: asyncio.Transport) -> bool:
        """Count a new connection, or close it at once (False) past a limit, logged once a period per address."""
        from bourre_env.words import plural

        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, (tuple, list)) and peer else "unknown"
        if self._by_address[address] >= self.per_address:
            open_here = plural(self.per_address, "connection is", "connections are")
            why = f"{open_here} open from it, the limit for one address"
        elif len(self._open) >= self.max_connections:
            why = f"{plural(self.max_connections, 'connection is', 'connections are')} open, the server's limit"
        else:
            self._open[transport] = address
            self._by_address[address] += 1
            return True
        self.refused += 1
        self.note(f"refused:{address}", f"refused connections from {address}: {why}")
        transport.abort()  # the descriptor is freed now, nothing read
        return False

    def release(self, transport: asyncio.BaseTransport) -> None:
        """Forget a closed connection (once, whichever protocol saw it close)."""
        address = self._open.pop(transport, None)
        if address is not None:
            self._by_address[address] -= 1
            if self._by_address[address] <= 0:
                del self._by_address[address]

    def note(self, key: str, message: str) -> None:
        """Log ``message`` as a warning unless ``key`` was logged less than ``log_seconds`` ago; the next line for it
        says how many were not logged meanwhile."""
        now = time.monotonic()
        when, since = self._logged.get(key, (-float("inf"), 0))
        if now - when < self.log_seconds:
            self._logged[key] = (when, since + 1)
            return
        more = f" ({since} more since the last such line)" if since else ""
        log.warning("%s%s; logged once in %g s", message, more, self.log_seconds)
        self._logged[key] = (now, 0)
        if len(self._logged) > 10_000:  # many addresses: forget those logged long ago
            self._logged = {k: v for k, v in self._logged.items() if now - v[0] < self.log_seconds}

    def quiet_accept_errors(self, loop: asyncio.AbstractEventLoop) -> None:
        """Make ``loop`` log an accept that ran out of file descriptors in one line a period (asyncio logs a traceback
        for each try); every other error goes to the handler it had."""
        previous = loop.get_exception_handler()

        def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            error = context.get("exception")
            if isinstance(error, OSError) and error.errno in _OUT_OF_DESCRIPTORS:
                self.note(
                    "descriptors", f"a connection could not be accepted: {error.strerror}; accepting again in a second"
                )
                return
            if previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)

        loop.set_exception_handler(handler)


def _guarded_http(base: type[asyncio.Protocol], guard: Guard) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol ``base`` (h11 or httptools: both keep the request in ``cycle``, whose ``more_body``
    turns False once its body is in) with the guard's limits and request timeout."""
    http: Any = base

    class Guarded(http):  # type: ignore[misc,valid-type]
        _admitted = False
        _deadline: asyncio.TimerHandle | None = None
        _stalled: asyncio.TimerHandle | None = None  # set while writing is paused
        _waiting_after: Any = None  # the cycle answered last: a request is whole once a newer one has all its body

        def connection_made(self, transport: Any) -> None:
            if not guard.admit(transport):
                return
            self._admitted = True
            super().connection_made(transport)
            self._arm(None)

        def connection_lost(self, exc: Exception | None) -> None:
            if not self._admitted:
                return
            self._disarm()
            if self._stalled is not None:
                self._stalled.cancel()
            guard.release(self.transport)
            super().connection_lost(exc)

        def pause_writing(self) -> None:
            # the answer waits for the client to read: a whole request is in, so the request timeout no longer
            # watches it, and a client that never reads would hold the connection (and the answer's task) for ever
            super().pause_writing()
            if self._stalled is None:
                self._stalled = self.loop.call_later(guard.write_seconds, self._unread)

        def resume_writing(self) -> None:
            if self._stalled is not None:
                self._stalled.cancel()
                self._stalled = None
            super().resume_writing()

        def _unread(self) -> None:
            self._stalled = None
            if not self.transport.is_closing():
                guard.timed_out += 1
                self.transport.abort()

        def data_received(self, data: bytes) -> None:
            if self._admitted:
                super().data_received(data)

        def on_response_complete(self) -> None:
            answered = self.cycle
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm(answered)

        def handle_websocket_upgrade(self, *args: Any) -> None:
            self._disarm()  # a WebSocket lives on: its slot is released by its own protocol's connection_lost
            super().handle_websocket_upgrade(*args)

        def _arm(self, answered: Any) -> None:
            self._disarm()
            self._waiting_after = answered
            self._deadline = self.loop.call_later(guard.request_seconds, self._overdue)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _overdue(self) -> None:
            self._deadline = None
            if self.transport.is_closing() or self.transport.get_protocol() is not self:
                return
            cycle = self.cycle
            if cycle is not None and cycle is not self._waiting_after and not cycle.more_body:
                return  # a whole request is in: the application answers it, in its own time
            guard.timed_out += 1
            self.transport.abort()

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return cast("type[asyncio.Protocol]", Guarded)


def _guarded_ws(base: type[asyncio.Protocol], guard: Guard) -> type[asyncio.Protocol]:
    """uvicorn's WebSocket protocol ``base``, which releases the connection's slot when it closes."""
    ws: Any = base

    class Guarded(ws):  # type: ignore[misc,valid-type]
        def connection_made(self, transport: Any) -> None:
            self._guarded_transport = transport
            super().connection_made(transport)

        def connection_lost(self, exc: Exception | None) -> None:
            guard.release(self._guarded_transport)
            super().connection_lost(exc)

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return cast("type[asyncio.Protocol]", Guarded)


def config(app: Any, guard: Guard | None = None, **options: Any) -> uvicorn.Config:
    """``uvicorn.Config(app, **options)`` with the guard's protocol classes (``http`` and ``ws`` in ``options`` name
    the ones to guard: uvicorn's defaults otherwise) and ``BACKLOG``; ``guard``: its limits (the constants by
    default), kept as the config's ``guard``."""
    from uvicorn.config import HTTP_PROTOCOLS, WS_PROTOCOLS
    from uvicorn.importer import import_from_string

    guard = guard or Guard()
    http = options.pop("http", "auto")
    ws = options.pop("ws", "auto")
    http_class = import_from_string(HTTP_PROTOCOLS[http]) if isinstance(http, str) else http
    ws_path = WS_PROTOCOLS[ws] if isinstance(ws, str) else None
    ws_class = import_from_string(ws_path) if ws_path is not None else ws
    if not hasattr(http_class, "on_response_complete"):
        raise ValueError(f"the connection guard knows uvicorn's h11 and httptools protocols, not {http_class!r}")
    options.setdefault("backlog", BACKLOG)
    built = uvicorn.Config(
        app,
        http=_guarded_http(http_class, guard),
        ws=_guarded_ws(ws_class, guard) if ws_class is not None else "none",
        **options,
    )
    built.guard = guard  # type: ignore[attr-defined]
    return built


class Server(uvicorn.Server):
    """A ``uvicorn.Server`` whose event loop logs running out of file descriptors once a period (``Guard``).
    ``on_exit``: called (in the event loop's thread) at the first Ctrl-C or SIGTERM, before uvicorn waits for the
    requests in flight: the arena tells its matches to stop there, so that they end before the graceful shutdown's
    time runs out rather than being cancelled (a traceback) after it."""

    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self.on_exit = on_exit

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.on_exit is not None and not self.should_exit:
            self.on_exit()
        super().handle_exit(sig, frame)

    async def serve(self, sockets: Any = None) -> None:
        guard = getattr(self.config, "guard", None) or Guard()
        guard.quiet_accept_errors(asyncio.get_running_loop())
        await super().serve(sockets)
