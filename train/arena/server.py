"""``bourre arena serve``: the Starlette app where remote bots connect (``/bot``) and matches are asked for.

========================= ===================================================================================
``GET /bot`` (WebSocket)  a bot's connection: ``hello`` first, then turns and actions (``docs/protocol.md``)
``POST /api/matches``     a match (``MatchSpec`` as JSON); answers when it is over with its report (operator)
``GET /api/bots``         the names of the bots connected now (operator)
``GET /leaderboard``      the ratings, and each bot's matches and hand histories (``train.arena.leaderboard``)
``GET /play``             a person's seat at a table with bots (``--people``); ``GET /people``: their results
========================= ===================================================================================

The operator's routes (``train.arena.operator_api``) ask for an operator token (``Authorization: Bearer TOKEN``;
``bourre arena add-operator``, or the one ``bourre arena serve`` makes at its first start); a request without a known
one is refused with 401 and one line. The server trusts nothing a bot sends: its messages are parsed by
``protocol.parse_client`` alone (a size cap before parsing, exact key sets), at most ``MAX_RATE`` a second, and nothing
in them names a file or code: a match's built-in seats and its fallback are checked by
``train.web.agent_specs.check_agent``, the rule of the browser table (registered names and budgets within limits, plus
the operator's ``--agent`` specs). A request with an ``Origin`` of another host is refused, and on the loopback only
this machine's names are answered, as by ``bourre serve``.

Everything runs on one event loop (uvloop's, libuv's loop in C, where it is installed; asyncio's own elsewhere:
``serve``'s ``loop``): the sockets, and every match as a task (``train.arena.match``), so a turn and its answer take
no hand-off between threads; built-in agents think, and the store writes, in threads of their own.
uvicorn serves the WebSockets with the ``websockets`` package (its sans-I/O protocol, over a transport that sends
the writes of a loop turn in one system call: ``train.arena.bot_socket``), per-message compression off
(``ws_options``): the messages are small, and compressing them cost more CPU than it saved.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import secrets
import socket
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import sqlalchemy as sa
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from train.arena import bot_socket, holds, leaderboard, operator_api, protocol, thinking
from train.arena.match import MAX_MATCHES, MatchSpec, draw_secret, play_match, warm_up
from train.arena.people import People
from train.arena.people.routes import routes as people_routes
from train.arena.records import Book, insert_baseline
from train.arena.remote import BotSlot, Connection, Registry
from train.arena.scheduler import Ladder, LadderConfig, lifespan
from train.arena.storage import Store
from train.web import connections, http_input
from train.web.agent_specs import check_agent
from train.web.errors import TableError
from train.web.http_input import LOOPBACK_HOSTS

__all__ = [
    "Arena",
    "Arrivals",
    "HELLO_SECONDS",
    "MAX_MATCHES",
    "MAX_RATE",
    "RECONNECT_BURST",
    "RECONNECT_RATE",
    "RECONNECT_WAIT",
    "STOP_SECONDS",
    "WS_OPTIONS",
    "create_app",
    "announce",
    "run",
    "serve",
    "settle_heap",
    "start",
    "ws_options",
]

log = logging.getLogger("bourre.arena")

HELLO_SECONDS = 5.0
"""A connection that has not said hello by then is closed."""
REFUSE_SECONDS = 5.0
"""A refused connection that has not taken its fatal ``error`` and the close by then is cut off."""
MAX_RATE = 100.0
"""Messages a second a bot may send that answer no pending turn, on average (a bucket of ``2 * MAX_RATE``): late
or made-up actions, malformed messages. An answer to the turn the server awaits is never counted, however fast the
table plays."""
RECONNECT_BURST = 10.0
"""Connections a bot may open in a row at full speed (``Arrivals``)."""
RECONNECT_RATE = 0.5
"""Connections a second a bot may open on average past ``RECONNECT_BURST``; past that its welcome waits."""
RECONNECT_WAIT = 30.0
"""The longest wait before a welcome."""
STOP_SECONDS = 3
"""At Ctrl-C or SIGTERM, the longest a server waits for its requests in flight (its matches stop after their game
under way) before it closes them."""
WAIT_POLL = 0.05
"""Seconds between two looks at a waiting request's bots."""
WS_MAX_SIZE = 16 * protocol.MAX_MESSAGE_BYTES
"""A frame past this is refused by uvicorn unread (close code 1009); past ``protocol.MAX_MESSAGE_BYTES`` and up to
it, the bot is told why."""
PING_SECONDS = 20.0
"""The server pings every connection this often (a WebSocket ping frame: libraries answer it on their own)."""
PING_TIMEOUT_SECONDS = 20.0
"""A connection that answers no ping within this is closed (code 1011): one whose bot vanished without closing it
is seen as lost (its grace period starts) within a minute, not held open."""
WS_OPTIONS: dict[str, Any] = {
    "ws_max_size": WS_MAX_SIZE,
    "ws_per_message_deflate": False,
    "ws_ping_interval": PING_SECONDS,
    "ws_ping_timeout": PING_TIMEOUT_SECONDS,
}
"""uvicorn's WebSocket settings of the arena (``ws_options`` adds the implementation)."""


def ws_options() -> dict[str, Any]:
    """``WS_OPTIONS`` with the arena's WebSocket protocol class: uvicorn's sans-I/O one over a transport that sends
    a loop turn's writes at once and pauses reading only when the application falls behind
    (``train.arena.bot_socket``)."""
    from train.arena.bot_socket import BotSocketProtocol

    return {**WS_OPTIONS, "ws": BotSocketProtocol}


class Arena:
    """The server's state: the store, the bots connected, the matches under way. ``offered``: the operator's
    ``--agent`` specs, which a match may name beside the registered agents. Built, it has played one game
    (``match.warm_up``), so that no match loads the compiled game code on the event loop."""

    def __init__(self, store: Store, offered: Sequence[str] = (), ladder: LadderConfig | None = None) -> None:
        warm_up()
        self.store = store
        # the ratings (train.arena.records.Book), and the scheduler of bourre arena serve --ladder
        cells = ladder or LadderConfig()
        self.book = Book(store, cells.fields, cells.sizes)
        self.ladder = None if ladder is None else Ladder(self, ladder, self.book)
        self.offered = tuple(offered)
        self.registry = Registry()
        self.running = 0
        self.stopping = False
        self._allowed: set[str] = set()  # specs check_agent accepted (it reads the installed entry points: slow)
        self.people = People(self)  # people at the table: admitted once enabled (bourre arena serve --people)
        self.draw_secret: Callable[[], str] = draw_secret  # the deals of a match with a remote seat (tests fix it)
        self.arrivals = Arrivals()
        # a bot's connect and disconnect, one at a time: its hold in the database follows its live connection here
        self.connecting: dict[str, asyncio.Lock] = {}
        self.wanted: Counter[str] = Counter()  # bots a waiting match request holds: the ladder starts none for them

    @contextlib.asynccontextmanager
    async def bots_held(self, names: Sequence[str], seconds: float) -> AsyncIterator[None]:
        """Hold bots ``names`` for a match request that waits up to ``seconds`` for them to end the matches they
        play: the ladder starts no new match for them meanwhile, nor until the request's match is over (without a
        hold, the ladder starts a bot's next match as its last one ends, and a request would rarely find it idle).
        A bot that is not connected is not waited for; past ``seconds`` the request goes on, and is refused as
        without a wait."""
        if seconds <= 0 or not names:
            yield
            return
        self.wanted.update(names)
        try:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and any(self._in_a_match(name) for name in names):
                await asyncio.sleep(WAIT_POLL)
            yield
        finally:
            self.wanted.subtract(names)
            self.wanted = +self.wanted  # the bots no request holds any more

    def _in_a_match(self, name: str) -> bool:
        slot = self.registry.slots.get(name)
        return slot is not None and slot.connection is not None and slot.match is not None

    def check_agent(self, spec: str) -> None:
        """``TableError`` for a built-in agent spec that a match may not name (``agent_specs.check_agent``)."""
        if spec not in self._allowed:
            check_agent(spec, self.offered)
            self._allowed.add(spec)

    async def play(self, spec: MatchSpec, claimed: str | None = None) -> dict[str, Any]:
        """Play a match on the running loop and store every game as it ends; its report as a dict, with ``text``.
        ``claimed``: the id of a match this server claimed (``Store.claim_match``), stored already."""
        if self.running >= MAX_MATCHES:
            raise TableError(429, f"{MAX_MATCHES} matches are under way: try again later")
        self.running += 1
        try:
            match = claimed or secrets.token_hex(8)
            if spec.remote and spec.secret is None:
                spec = spec.with_secret(self.draw_secret())
            if claimed is None:
                await asyncio.wrap_future(self.store.start_match(match, spec.request()))

            async def store(k: int, r: int, rows: Any, saved: dict[str, Any]) -> None:
                await asyncio.wrap_future(self.store.game_finished(match, k, r, rows, saved))

            async def store_par(k: int, rows: Any, saved: dict[str, Any]) -> None:
                key = (str(spec.par_key), spec.players, spec.seed, k)
                await asyncio.wrap_future(insert_baseline(self.store, key, rows, saved))

            generation = self.store.generation  # raised if this server is judged gone meanwhile: the match stops

            def fenced() -> bool:
                return self.store.generation != generation

            try:
                report = await play_match(
                    spec, match, self.registry, store, lambda: self.stopping, store_par, fenced=fenced
                )
            except ValueError as err:
                await asyncio.wrap_future(self.store.finish_match(match, "refused", None))
                raise TableError(409, str(err)) from None
            except Exception:  # settled now as a restart would settle it, not shown running until then
                with contextlib.suppress(Exception):
                    await asyncio.wrap_future(self.store.finish_match(match, "interrupted", None))
                raise
            await asyncio.wrap_future(self.store.finish_match(match, report.status, report.to_dict()))
            return {"report": report.to_dict(), "text": report.text()}
        finally:
            self.running -= 1


class _Bucket:
    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst, self.level, self.last = rate, burst, burst, time.monotonic()

    def take(self) -> float:
        """Take one; the level left (negative: past the limit, by that many)."""
        now = time.monotonic()
        self.level = min(self.burst, self.level + (now - self.last) * self.rate)
        self.last = now
        self.level -= 1
        return self.level


class Arrivals:
    """The connections of each bot (by name, once its token is checked): a bucket of ``RECONNECT_BURST`` refilled
    at ``RECONNECT_RATE`` a second. Past it a bot is let in after a wait that grows with its arrivals, up to
    ``RECONNECT_WAIT`` seconds: a bot that reconnects in a loop is slowed down, never locked out."""

    def __init__(self) -> None:
        self._buckets: dict[str, _Bucket] = {}

    def wait(self, name: str) -> float:
        """Seconds the bot ``name`` waits before its welcome."""
        if len(self._buckets) > 100_000:  # bounded: forget the bots not seen for long
            now = time.monotonic()
            self._buckets = {k: b for k, b in self._buckets.items() if now - b.last < RECONNECT_WAIT * 10}
        bucket = self._buckets.setdefault(name, _Bucket(RECONNECT_RATE, RECONNECT_BURST))
        level = bucket.take()
        if level >= 0:
            return 0.0
        bucket.level = max(bucket.level, -RECONNECT_RATE * RECONNECT_WAIT)  # a wait never grows past the cap
        return min(-level / RECONNECT_RATE, RECONNECT_WAIT)


async def _attach(arena: Arena, registry: Registry, connection: Connection, bot: bool) -> BotSlot:
    """The bot's slot, with this connection live; ``ValueError`` when the bot is connected already, here or to
    another server on the database (``train.arena.holds``: one live connection per token however many
    servers or ``--processes`` children share it, so that a bot plays one match at a time)."""
    if not bot:
        return registry.attach(connection)
    async with arena.connecting.setdefault(connection.name, asyncio.Lock()):
        if registry.is_live(connection.name):
            return registry.attach(connection)  # refused, as before
        try:
            holder = await asyncio.to_thread(holds.take, arena.store, connection.name)
        except sa.exc.SQLAlchemyError as err:
            raise ValueError(f"the database is out of reach ({arena.store.reason(err)}): connect again later") from None
        if holder is not None:
            raise ValueError(
                f"bot {connection.name!r} is connected already, to another server process on this "
                "database: one live connection per token"
            )
        return registry.attach(connection)


async def _let_go(arena: Arena, registry: Registry, name: str) -> None:
    """After a bot's connection ends: its hold in the database, unless it is connected here again already. A server
    that stops first keeps it, and another server takes it over once this one is gone."""
    async with arena.connecting.setdefault(name, asyncio.Lock()):
        if registry.is_live(name):
            return
        try:
            await asyncio.to_thread(holds.drop, arena.store, name)
        except sa.exc.SQLAlchemyError as err:  # kept until this server stops: the bot may connect here meanwhile
            log.warning("bot %s: its connection's hold was not let go (%s)", name, arena.store.reason(err))


async def _refuse(ws: WebSocket, message: str, reason: str) -> None:
    """The fatal ``error`` and the close, given ``REFUSE_SECONDS``: a peer that reads nothing (pinging meanwhile, so
    that its pongs fill the buffers) would hold the send, and a close that waits for them to drain, for ever; it is
    cut off instead."""
    try:
        await asyncio.wait_for(_say_and_close(ws, message, reason), REFUSE_SECONDS)
    except asyncio.TimeoutError:
        direct = ws.scope.get("extensions", {}).get(bot_socket.EXTENSION)
        if direct is not None:
            direct.transport.abort()
    except (WebSocketDisconnect, OSError, RuntimeError):  # gone already, or closed under the send
        pass


async def _say_and_close(ws: WebSocket, message: str, reason: str) -> None:
    await ws.send_text(protocol.encode(protocol.error(message, fatal=True, reason=reason)))
    await ws.close(code=1008)


def _cut_off(connection: Connection, bucket: _Bucket, data: str | bytes) -> bool:
    """One message of a bot: an action for its pending turn goes to its table; anything else is answered with an
    error. True when the bot is cut off: more than ``MAX_RATE`` messages a second that answer no turn."""
    try:
        parsed = protocol.parse_client(data)
        if isinstance(parsed, protocol.Hello):
            raise protocol.ProtocolError("hello: this connection has said hello already")
    except protocol.ProtocolError as err:
        parsed, fault = None, str(err)
    # an answer to the pending turn is never counted: the limit bounds the traffic no turn asked for
    if isinstance(parsed, protocol.Action) and connection.answer(parsed):
        return False
    if bucket.take() < 0:
        connection.send(
            protocol.error(
                f"more than {MAX_RATE:g} messages a second that answer no pending turn: closed",
                fatal=True,
                reason="rate",
            )
        )
        return True
    if parsed is None:
        if not connection.fault("malformed", fault):
            connection.send(protocol.error(fault))
        return False
    connection.send(
        protocol.error(
            f"turn {parsed.turn} awaits no action (its clock ran out, or it was never sent, or it was answered already)"
        )
    )
    return False


def _send_directly(connection: Connection, direct: Any) -> None:
    """From now on ``connection`` writes each message at once (``BotSocketProtocol.send_now``), after those queued
    so far, in order."""
    while not connection.outbox.empty():
        text = connection.outbox.get_nowait()
        if text is not None:
            direct.send_now(text)
    connection.write = direct.send_now


async def _writer(ws: WebSocket, connection: Connection) -> None:
    while (text := await connection.outbox.get()) is not None:
        try:
            await ws.send_text(text)
        except Exception:  # the socket is gone: its reader sees the disconnect and detaches the bot
            return


async def _bot(ws: WebSocket) -> None:
    """``/bot``: a bot's connection, from its hello to its end."""
    arena: Arena = ws.app.state.arena
    await ws.accept()
    refused = http_input.foreign_origin(ws.headers)
    if refused is not None:
        await _refuse(ws, refused, "origin")
        return
    try:
        first = await asyncio.wait_for(ws.receive(), HELLO_SECONDS)
    except asyncio.TimeoutError:
        await _refuse(ws, f"no hello within {HELLO_SECONDS:g} s", "hello")
        return
    if first["type"] == "websocket.disconnect":
        return
    try:
        hello = protocol.parse_client(first.get("text") or first.get("bytes") or b"")
    except protocol.ProtocolError as err:
        # a name or token the server can never accept: connecting again would be refused again
        why = str(err).partition(":")[0]
        await _refuse(ws, str(err), {"name": "name", "token": "auth", "protocol": "version"}.get(why, "hello"))
        return
    if not isinstance(hello, protocol.Hello):
        await _refuse(ws, "the first message must be a hello", "hello")
        return
    if hello.protocol != protocol.PROTOCOL_VERSION:
        await _refuse(
            ws,
            f"protocol version {hello.protocol} is not spoken here: this server speaks version "
            f"{protocol.PROTOCOL_VERSION}",
            "version",
        )
        return
    person = arena.people.claim(hello)  # a person's seat token (train.arena.people), else None
    if person is None and not await asyncio.to_thread(arena.store.check_token, hello.name, hello.token):
        await _refuse(ws, "unknown bot name, or a wrong token", "auth")
        return
    wait = arena.arrivals.wait(hello.name)
    if wait > 0:  # reconnecting in a loop: let in, but slowly
        log.info("bot %s reconnects often: welcomed in %.1f s", hello.name, wait)
        await asyncio.sleep(wait)
    registry = arena.registry if person is None else arena.people.registry  # people: never the ladder's
    connection = Connection(hello.name if person is None else person.key, hello.observation, hello.words)
    try:
        slot = await _attach(arena, registry, connection, person is None)
    except ValueError as err:
        await _refuse(ws, str(err), "connected")
        return
    writer = None
    cut_off = False
    # attached and detached as one: whatever ends the connection from here on (a client gone while its welcome
    # was held back, a send that fails), the finally below lets its slot and its database hold go
    try:
        log.info("bot %s connected", hello.name)
        await ws.send_text(protocol.encode(protocol.welcome(hello.name)))
        if slot.forfeited:  # told once, on its return: it follows the match to its end but is sent no turn
            await ws.send_text(
                protocol.encode(
                    protocol.error(
                        f"match {slot.match}: away for more than the grace period of {slot.grace:g} s, this bot "
                        "forfeited its seat; the fallback plays it to the end of the match"
                    )
                )
            )
        for message in slot.catch_up():  # a bot back in its match is told where it is; its next turn follows
            connection.send(message)
        # uvicorn with the arena's protocol (train.arena.bot_socket): messages go and come without a task
        # between; elsewhere (another ASGI server, the tests' client) a writer task sends them
        direct = ws.scope.get("extensions", {}).get(bot_socket.EXTENSION)
        if direct is not None:
            _send_directly(connection, direct)
        else:
            writer = asyncio.create_task(_writer(ws, connection))
        if person is not None:
            arena.people.start(person)
        bucket = _Bucket(MAX_RATE, 2 * MAX_RATE)
        if direct is not None:
            cut_off = await _read_directly(ws, direct, connection, bucket)
        else:
            cut_off = await _read(ws, connection, bucket)
    except (WebSocketDisconnect, OSError, RuntimeError):  # gone before or under a send: it is detached below
        pass
    finally:
        registry.detach(connection)
        try:
            if writer is not None:
                await asyncio.wait_for(writer, 1.0)
            await ws.close(code=1008 if cut_off else 1000)  # 1008: after the fatal error of a cut-off
        except Exception:  # closed from the other side already, or the writer stuck on a dead socket
            if writer is not None:
                writer.cancel()
        log.info("bot %s disconnected", hello.name)
        if person is None:
            await _let_go(arena, registry, hello.name)


async def _read(ws: WebSocket, connection: Connection, bucket: _Bucket) -> bool:
    """The bot's messages until it leaves (False) or is cut off (True)."""
    while True:
        try:
            message = await ws.receive()
        except WebSocketDisconnect:
            return False
        if message["type"] == "websocket.disconnect":
            return False
        data = message.get("text")
        if data is None:
            data = message.get("bytes") or b""
        if _cut_off(connection, bucket, data):
            return True


async def _read_directly(ws: WebSocket, direct: Any, connection: Connection, bucket: _Bucket) -> bool:
    """Every message handed over as it is read (``BotSocketProtocol.direct``), until the bot leaves (False) or is
    cut off (True); what came before, and the connection's end, still come through ``ws.receive``."""
    cut_off: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_message(data: str | bytes) -> None:
        if not cut_off.done() and _cut_off(connection, bucket, data):
            cut_off.set_result(None)

    direct.direct(on_message)
    reading = asyncio.ensure_future(_read(ws, connection, bucket))
    try:
        await asyncio.wait((reading, cut_off), return_when=asyncio.FIRST_COMPLETED)
    finally:
        reading.cancel()
    # a reader that failed is a connection that ended (its error is not the bot's fault, nor re-raised here)
    ended = reading.done() and not reading.cancelled() and reading.exception() is None
    return cut_off.done() or (ended and reading.result())


def create_app(arena: Arena, allowed_hosts: Sequence[str] = LOOPBACK_HOSTS) -> Starlette:
    """The arena's app over ``arena``, which its endpoints read from ``app.state.arena``; ``allowed_hosts``: the
    ``Host`` names it answers."""
    app = Starlette(
        routes=[
            WebSocketRoute("/bot", _bot),
            Route("/api/matches", operator_api.matches, methods=["POST"]),
            Route("/api/bots", operator_api.bots, methods=["GET"]),
            *leaderboard.routes(arena.book, arena.store),
            *people_routes(arena.people),
        ],
        middleware=[Middleware(http_input.HostCheck, allowed_hosts=list(allowed_hosts))],
        lifespan=lifespan(arena),
    )
    app.state.arena = arena
    return app


def settle_heap() -> None:
    """Put what is alive once the server has started (its modules, numba's compiled code, SQLAlchemy's tables: some
    200,000 objects) out of the garbage collector's reach (``gc.freeze``): the collector's full passes, which the
    messages' short-lived dicts set off every few seconds, then walk only what the matches made since."""
    gc.collect()
    gc.freeze()


def run(
    data: str,
    host: str = "127.0.0.1",
    port: int = 8765,
    offered: Sequence[str] = (),
    database: str | None = None,
    ladder: LadderConfig | None = None,
    people: bool = False,
    keep_token: Callable[[str | None], None] | None = None,
    loop: str = "auto",
) -> None:
    """``bourre arena serve``: until Ctrl-C; matches a stopped server left are marked interrupted first, and at the
    first start an operator token is made and printed once, or handed to ``keep_token`` (``start``). ``database``: a URL
    (``storage.database_url``) instead of the data folder's SQLite file. ``ladder``: schedule matches
    (``train.arena.scheduler``). ``people``: admit people at tables with bots (``train.arena.people``). ``loop``: the
    event loop (``serve``). Several processes: ``train.arena.processes.run``."""
    from train.web.agent_specs import check_offered

    checked = [check_offered(spec) for spec in offered]
    store = start(data, database, keep_token)
    announce(store, data, database, host, port, ladder, people)
    serve(store, host, checked, ladder, people, port=port, loop=loop)


def start(data: str, database: str | None, keep_token: Callable[[str | None], None] | None = None) -> Store:
    """The store of ``bourre arena serve``, after the start's one-time work: migrated, the matches a stopped server
    left marked interrupted, and at the first start an operator token made and printed once; ``keep_token``, when
    given, gets that token instead of its being printed (``bourre arena serve --token-file``), or None where the data
    has an operator already."""
    store = Store(data, url=database)
    try:
        interrupted = store.mark_interrupted()
        if interrupted:
            print(f"bourre arena: {interrupted} match(es) of a server that stopped are marked interrupted", flush=True)
        token = None if store.has_operator() else store.add_operator("operator")
        if keep_token is not None:
            keep_token(token)
        elif token is not None:
            print(
                f"bourre arena: the operator token (shown once, only its hash is kept: save it in a file for "
                f"bourre arena match --token-file FILE, or make one straight into a file with bourre arena "
                f"add-operator NAME --token-file FILE): {token}",
                file=sys.stderr,
                flush=True,
            )
    except BaseException:
        store.close()
        raise
    return store


def announce(
    store: Store,
    data: str,
    database: str | None,
    host: str,
    port: int,
    ladder: LadderConfig | None,
    people: bool,
    each: str = "",
) -> None:
    """Print where bots connect (the data folder, or the store's URL without its password), and what the server
    does; ``each``: said after the ladder's tables (per process)."""
    if people:
        print(
            f"bourre arena: people take a seat at http://{'[' + host + ']' if ':' in host else host}:{port}/play",
            flush=True,
        )
    if ladder is not None and ladder.peers_only:
        print(
            f"bourre arena: the ladder pairs the connected bots among themselves at "
            f"{', '.join(map(str, ladder.sizes))} players ({', '.join(ladder.fields)} fill a table too few bots are "
            f"idle for), {ladder.tables} at once{each}",
            flush=True,
        )
    elif ladder is not None:
        print(
            f"bourre arena: the ladder schedules matches: {', '.join(ladder.fields)} at "
            f"{', '.join(map(str, ladder.sizes))} players, {ladder.tables} at once{each}",
            flush=True,
        )
    url = f"ws://{'[' + host + ']' if ':' in host else host}:{port}/bot"
    where = data if database is None else store.masked_url  # a URL is shown without its password
    print(f"bourre arena: bots connect to {url}; data in {where}  (Ctrl-C to stop)", flush=True)


def serve(
    store: Store,
    host: str,
    offered: Sequence[str],
    ladder: LadderConfig | None,
    people: bool,
    port: int = 0,
    sockets: list[socket.socket] | None = None,
    loop: str = "auto",
) -> None:
    """Serve ``store``'s arena until Ctrl-C or SIGTERM, on ``host``:``port`` or on ``sockets`` (listening already:
    ``train.arena.processes``), then close the store. ``offered``: the ``--agent`` specs, checked already. ``loop``:
    uvicorn's event loop: ``auto``, uvloop where it is installed (the arena extra) and asyncio's own elsewhere, or
    ``asyncio`` or ``uvloop``."""
    arena = Arena(store, offered, ladder)
    arena.people.enabled = people
    settle_heap()
    # slow or many clients cannot exhaust it (train.web.connections)
    app = create_app(arena, http_input.allowed_hosts(host))
    config = connections.config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=STOP_SECONDS,
        loop=loop,
        **ws_options(),
    )
    try:
        # at the first Ctrl-C or SIGTERM the matches stop after their game under way (arena.stopping)
        connections.Server(config, on_exit=lambda: setattr(arena, "stopping", True)).run(sockets=sockets)
    finally:
        store.close()
        thinking.shutdown()  # the worker processes of heavy seats
