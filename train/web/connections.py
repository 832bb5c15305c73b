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
``MAX_CONNECTIONS_PER_ADDRESS``  64        connections open at once from one client address (``bourre arena serve
                                           --max-connections-per-address``)
``REQUESTS_PER_SECOND``          50 /s     requests one connection may make, on average, in a burst of
                                           ``BURST_SECONDS`` of them
``ADDRESS_REQUESTS_PER_SECOND``  100 /s    requests (and WebSocket handshakes and pings) one address may make, on
                                           average, in a burst of ``BURST_SECONDS`` of them; raised in proportion
                                           with the address's connection limit (a proxy's clients share one)
``HOLD_SECONDS``                 5 s       the longest a request over its budgets is held; one that would wait
                                           longer is answered 429 with ``Retry-After``, and its connection closed
``BACKLOG``                      128       connections the kernel queues before the server accepts them, and the most
                                           the event loop accepts in one go
``LOG_SECONDS``                  60 s      a refused address (or a run out of file descriptors) is logged once in
                                           this period, with the count of refusals since
================================ ========= ==========================================================================

A connection past a limit is closed as soon as it is accepted, unread. A WebSocket (an arena bot) counts as one
connection for as long as it is open, and no request timeout applies to it once upgraded: the application bounds its
hello (``train.arena.server.HELLO_SECONDS``) and uvicorn pings it. Behind a proxy every client has the proxy's address:
raise the per-address limit there (the address's request budget grows with it).

A request's cost is charged before any of its work is done, when its headers are in: one token from its
connection's bucket and one from its address's, a bucket going into debt when it has none. A request that finds a
bucket empty is *held*, nothing of it done, until its buckets have paid the debt back (its turn at the budget's
rate), and then served; one that would be held longer than ``HOLD_SECONDS`` is answered 429 (Too Many Requests)
with ``Retry-After`` (seconds) and ``Connection: close``, uncharged, and its connection closed. A held request holds
up its connection (uvicorn serves a connection's pipelined requests one after another, reading no further meanwhile),
so an address's debt, hence its hold, is bounded by its connections. A WebSocket handshake over budget is held the
same way, reading paused; a ping a peer sends is charged to its address too, and one the address has no token for
cuts the connection off (the arena's own protocol bounds a connection's pings as well:
``train.arena.bot_socket.MAX_PINGS``).

Why hold rather than refuse: a refusal is work done for the flood, and the client's answer to it is more work, a
retry or a new connection (each accepted, parsed and closed by the event loop: refusing at once, tried first, kept
the loop busy with the reconnects of a flood that connects again whenever closed). A held request costs a timer, and
one whose connection closes meanwhile is dropped undone. Before any budget, 32 keep-alive connections pipelining
GETs took a 90-game match of built-in agents from 0.4 s to 27 s; held, the match keeps its time
(``benchmarks/arena_floods.py``, docs/arena.md).

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
import math
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
    "ADDRESS_REQUESTS_PER_SECOND",
    "BURST_SECONDS",
    "HOLD_SECONDS",
    "MAX_CONNECTIONS_PER_ADDRESS",
    "REQUESTS_PER_SECOND",
    "REQUEST_SECONDS",
    "WRITE_SECONDS",
    "Guard",
    "Server",
    "config",
    "check_per_address",
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
REQUESTS_PER_SECOND = 50.0
"""Requests one connection may make a second, on average (a bucket of ``BURST_SECONDS`` of them)."""
ADDRESS_REQUESTS_PER_SECOND = 100.0
"""Requests, WebSocket handshakes and pings one address may make a second, on average (a bucket of
``BURST_SECONDS`` of them), at the default connection limit of an address; a guard whose limit is ``k`` times
``MAX_CONNECTIONS_PER_ADDRESS`` allows ``k`` times this."""
HOLD_SECONDS = 5.0
"""A request over its budgets is held at most this long before it is served; past that it is refused (429)."""
BURST_SECONDS = 2.0
"""A full bucket holds this many seconds of its rate: a page's burst of requests is served at once."""
BACKLOG = 128
"""The listening socket's backlog, which is also the most connections the event loop accepts in one go."""
FD_RESERVE = 128
"""File descriptors kept free for everything but connections: the database, files served, the listening sockets."""
LOG_SECONDS = 60.0
"""A refused address, or a run out of file descriptors, is logged once in this period."""
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


def check_per_address(value: int) -> int:
    """``value`` as a limit of connections per address (``ValueError`` in one line unless a whole number from 1 to
    ``MAX_CONNECTIONS``)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONNECTIONS:
        raise ValueError(
            f"--max-connections-per-address: expected a whole number from 1 to {MAX_CONNECTIONS} (the server's "
            f"limit of connections in all), got {value!r}"
        )
    return value


_default_per_address = MAX_CONNECTIONS_PER_ADDRESS


def set_default_per_address(value: int) -> None:
    """Make ``value`` (checked: ``check_per_address``) the connection limit of one address of every ``Guard`` made
    later without one: ``bourre arena serve --max-connections-per-address``, set before its server is made."""
    global _default_per_address
    _default_per_address = check_per_address(value)


class _Bucket:
    """A token bucket: ``rate`` tokens a second up to ``burst``; a take is charged even when none is left, the
    debt paid back, at ``rate``, before the next take finds a token."""

    __slots__ = ("at", "burst", "rate", "tokens")

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.at = now

    def level(self, now: float) -> float:
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        return self.tokens

    def take(self, now: float) -> float:
        """Charge one token: the seconds until the debt it leaves is paid back (0: there was a token)."""
        self.tokens = self.level(now) - 1.0
        return max(0.0, -self.tokens / self.rate)

    def refund(self) -> None:
        self.tokens += 1.0


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
    ``request_seconds`` to send a whole request and ``write_seconds`` to take an answer whose writing is paused, and
    ``request_rate`` requests a second per connection, ``address_rate`` per address (``ADDRESS_REQUESTS_PER_SECOND``
    scaled with ``per_address`` by default), a request over them held up to ``hold_seconds``. ``per_address``:
    ``MAX_CONNECTIONS_PER_ADDRESS`` unless ``set_default_per_address`` said otherwise. ``refused``, ``timed_out``
    and ``throttled`` (requests held or answered 429, handshakes held or cut off, pings cut off) count since it was
    made."""

    def __init__(
        self,
        max_connections: int = MAX_CONNECTIONS,
        per_address: int | None = None,
        request_seconds: float = REQUEST_SECONDS,
        log_seconds: float = LOG_SECONDS,
        write_seconds: float = WRITE_SECONDS,
        request_rate: float = REQUESTS_PER_SECOND,
        address_rate: float | None = None,
        hold_seconds: float = HOLD_SECONDS,
    ) -> None:
        self.max_connections = fd_budget(max_connections)
        self.per_address = _default_per_address if per_address is None else per_address
        self.request_rate = request_rate
        if address_rate is None:
            address_rate = ADDRESS_REQUESTS_PER_SECOND * max(1.0, self.per_address / MAX_CONNECTIONS_PER_ADDRESS)
        self.address_rate = address_rate
        self.hold_seconds = hold_seconds
        self.throttled = 0
        self._budgets: dict[str, _Bucket] = {}  # client address -> its bucket of requests
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

        address = address_of(transport)
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

    def connection_budget(self) -> _Bucket:
        """A new connection's bucket of requests (``request_rate``)."""
        return _Bucket(self.request_rate, max(1.0, self.request_rate * BURST_SECONDS), time.monotonic())

    def charge(
        self, address: str, connection: _Bucket | None = None, what: str = "requests", hold: float | None = None
    ) -> float | None:
        """Charge a request (``what``: its kind, for the log) of ``address``, and of ``connection`` when given,
        before its work: the seconds to hold it (0: its buckets had a token each), or None, nothing charged, where
        that would be more than ``hold`` (``hold_seconds`` by default; 0 for a WebSocket ping: it is answered now or
        never). Held and refused
        requests are counted in ``throttled`` and logged once a period per address."""
        now = time.monotonic()
        hold = self.hold_seconds if hold is None else hold
        budget = self._budgets.get(address)
        if budget is None:
            if len(self._budgets) > 10_000:  # many addresses: forget those whose buckets are full again
                self._budgets = {a: b for a, b in self._budgets.items() if b.level(now) < b.burst}
            budget = self._budgets[address] = _Bucket(self.address_rate, self.address_rate * BURST_SECONDS, now)
        wait = budget.take(now)
        if connection is not None:
            wait = max(wait, connection.take(now))
        if wait == 0.0:
            return 0.0
        if wait > hold:
            budget.refund()
            if connection is not None:
                connection.refund()
        self.throttled += 1
        self.note(
            f"throttled:{address}",
            f"throttled {what} from {address}: over {self.request_rate:g} a second on a connection or "
            f"{self.address_rate:g} from one address",
        )
        return None if wait > hold else wait

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


def address_of(transport: asyncio.BaseTransport) -> str:
    """The client address of ``transport`` ("unknown" where it has none: a Unix socket)."""
    peer = transport.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, (tuple, list)) and peer else "unknown"


def _too_many(retry_seconds: float) -> Any:
    """An ASGI application that answers 429 with ``Retry-After`` and closes the connection: for a request that its
    budgets would hold too long."""
    retry = str(max(1, math.ceil(retry_seconds)))
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"retry-after", retry.encode()),
        (b"connection", b"close"),
    ]
    body = f"too many requests: retry after {retry} s\n".encode()

    async def answer(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 429, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return answer


def _held(app: Any, seconds: float, transport: asyncio.BaseTransport) -> Any:
    """``app``, its request held ``seconds`` first (a timer: nothing of the request is done meanwhile), and dropped
    if its connection closed meanwhile: a flood that hangs up leaves no work behind."""

    async def later(scope: Any, receive: Any, send: Any) -> None:
        await asyncio.sleep(seconds)
        if not transport.is_closing():
            await app(scope, receive, send)

    return later


def _guarded_http(base: type[asyncio.Protocol], guard: Guard) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol ``base`` (h11 or httptools: both keep the request in ``cycle``, whose ``more_body``
    turns False once its body is in, and both read ``self.app`` once per request, when its headers are in) with the
    guard's limits, request timeout and request budgets."""
    http: Any = base

    class Guarded(http):  # type: ignore[misc,valid-type]
        _admitted = False
        _budget: _Bucket | None = None
        _address = "unknown"
        _app: Any = None
        _deadline: asyncio.TimerHandle | None = None
        _stalled: asyncio.TimerHandle | None = None  # set while writing is paused
        _waiting_after: Any = None  # the cycle answered last: a request is whole once a newer one has all its body

        # uvicorn's protocols read ``self.app`` exactly once per request, as its headers are parsed and before the
        # request's task exists: the one point where both can be charged before any of a request's work is done
        @property
        def app(self) -> Any:
            wait = guard.charge(self._address, self._budget)
            if wait is None:
                return _too_many(guard.hold_seconds)
            return self._app if wait == 0.0 else _held(self._app, wait, self.transport)

        @app.setter
        def app(self, value: Any) -> None:
            self._app = value

        def connection_made(self, transport: Any) -> None:
            if not guard.admit(transport):
                return
            self._admitted = True
            self._address = address_of(transport)
            self._budget = guard.connection_budget()
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
            wait = guard.charge(self._address, self._budget, "WebSocket handshakes")
            if wait is None:
                self.transport.abort()  # held too long: closed, unanswered
            elif wait == 0.0:
                super().handle_websocket_upgrade(*args)
            else:  # held as a request is: read no further meanwhile (the WebSocket's protocol reads on after)
                self.transport.pause_reading()
                self.loop.call_later(wait, self._upgrade_later, args)

        def _upgrade_later(self, args: tuple[Any, ...]) -> None:
            if not self.transport.is_closing():
                self.transport.resume_reading()
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
    """uvicorn's WebSocket protocol ``base``, which releases the connection's slot when it closes, and charges each
    ping the peer sends to its address's budget (where ``base`` answers pings in ``handle_ping``, as uvicorn's
    sans-I/O protocol and the arena's do), cutting the connection off past it."""
    ws: Any = base

    class Guarded(ws):  # type: ignore[misc,valid-type]
        def connection_made(self, transport: Any) -> None:
            self._guarded_transport = transport
            self._address = address_of(transport)
            super().connection_made(transport)

        if hasattr(base, "handle_ping"):

            def handle_ping(self, *args: Any) -> None:
                if guard.charge(self._address, None, "WebSocket pings", hold=0.0) is None:
                    if not self._guarded_transport.is_closing():
                        self._guarded_transport.abort()
                    return
                super().handle_ping(*args)

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
