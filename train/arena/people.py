"""People at the table: a person in a browser takes a seat at a match with bots, over the bots' own protocol.

The page (``GET /play``: ``train/arena/static/people.html``, drawn with the browser table's ``table.js`` and
``table.css`` of ``train/serve/static``) asks for a seat, then speaks ``docs/protocol.md`` on ``/bot`` as a remote bot
does, with ``words: true`` for the labels of the legal moves. The admission rule (``docs/arena.md``, "People at the
table"):

1. Only where the operator started the server with ``--people`` (``People.enabled``); else 403.
2. ``POST /api/people/seats`` (JSON, from this server's own page: another ``Origin`` is refused) names the person,
   the opponents (each ``bot:NAME`` of a bot connected now, or a built-in agent the server offers, as a match of the
   operator may name: the operator's ``--agent`` specs by their handles ``offered:K``, never by their options) and
   the deals (1 to ``MAX_DEALS``, and deals x players at most ``MAX_GAMES``: the seats' time a match holds). The
   name follows a bot's pattern, is no registered bot's name and no name seated now.
3. The answer holds a seat token (32 random bytes; only its SHA-256 is kept, in memory): the page says hello with it
   within ``SEAT_SECONDS``, and the match starts then. It serves to reconnect until the match ends, then it is
   forgotten.

What visitors hold is bounded, a visitor being a client address (an IPv6 one by its /64, which one host commonly
holds; behind a proxy, the address uvicorn's ``--forwarded-allow-ips`` lets it read):

* one visitor: ``REQUEST_BURST`` seat requests, then one per ``REQUEST_SECONDS`` (429 with the wait); one seat
  admitted and not yet claimed (a new request replaces it, its token void) and no request while its match is
  under way (429);
* all visitors: ``MAX_PENDING`` seats admitted and not claimed, each forgotten after ``SEAT_SECONDS``, and
  ``MAX_PEOPLE`` matches under way (429 past either, and a claim past ``MAX_PEOPLE`` is told to try later);
* one match: ``MAX_GAMES`` deals x players, ``MATCH_SECONDS`` of wall time, and ``IDLE_MOVES`` moves lost to the clock
  (``CLOCK`` each). Past the time or the idle moves, or away past the grace period, the person forfeits: the
  fallback plays the seat at once and the match ends (``aborted``) after the deal under way, its bots released.

``GET /api/people/options`` is refused (403) without ``--people``; with it, it shows what the page needs: the names
of the bots connected now (any of them may be asked for, and a refusal would say whether it is connected), the
registered agents the page suggests, each ``--agent`` spec of the operator as a handle with its agent's registered
name (``offered``; never its options: a URL, a key's variable, a file), and the bounds above.

A person's connection sits in a registry of its own (``People.registry``), never in the arena's: the ladder's
scheduler, ``GET /api/bots`` and a bot's name never meet it. At the table the person is ``bot:person:NAME``
(``PERSON_PREFIX``: a colon no bot name may hold). The match is stored like any other, its request flagged with
``people``, under the statuses ``people-running``, ``people-finished``, ``people-aborted``, ``people-refused``
(``STATUSES``), which the ladder's ratings, OpenSkill and the bots' pages do not read (``train.arena.records`` reads
``finished``, ``aborted`` and ``interrupted`` only). ``GET /people`` (and ``GET /api/people``) shows them apart.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import hmac
import html
import ipaddress
import json
import logging
import secrets
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, Protocol

import sqlalchemy as sa
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from train.arena import protocol
from train.arena.match import MAX_MATCHES, MatchSpec, play_match
from train.arena.remote import GRACE_SECONDS, BotSlot, Registry
from train.arena.storage import Store, bots, matches
from train.web import http_input
from train.web.errors import TableError


class Arena(Protocol):
    """What the people's seats use of the server's ``train.arena.server.Arena`` (named here, not imported: the server
    imports this module)."""

    store: Store
    registry: Registry
    offered: tuple[str, ...]
    running: int
    stopping: bool
    draw_secret: Callable[[], str]

    def check_agent(self, spec: str) -> None: ...


__all__ = [
    "CLOCK",
    "IDLE_MOVES",
    "MATCH_SECONDS",
    "MAX_DEALS",
    "MAX_GAMES",
    "MAX_PENDING",
    "MAX_PEOPLE",
    "REQUEST_BURST",
    "REQUEST_SECONDS",
    "PERSON_PREFIX",
    "SEAT_SECONDS",
    "STATUSES",
    "People",
    "Seat",
    "people_matches",
    "people_page",
    "visitor",
]

log = logging.getLogger("bourre.arena")

PERSON_PREFIX = "person:"
"""A person's key at the table (``bot:person:NAME``): no bot's name holds a colon."""
SEAT_SECONDS = 15.0
"""A seat token not used to connect within this long is forgotten (the page says hello at once)."""
MAX_PENDING = 32
"""Seats admitted and not yet claimed, from all visitors; one more is refused (429) until one expires."""
MAX_PEOPLE = 8
"""People's matches under way at once; a request or a claim past it is refused (429, or told to try later)."""
REQUEST_BURST = 4
"""Seat requests a visitor may make at once; then one more each ``REQUEST_SECONDS``."""
REQUEST_SECONDS = 30.0
MAX_VISITORS = 4096
"""Visitors whose recent requests are remembered; past it, the ones back to a full allowance are forgotten, and if
none is, a request from a new visitor is refused (429)."""
MAX_DEALS = 10
"""Deals of a person's match at most (each played once, the seats turning one place a deal)."""
MAX_GAMES = 30
"""Deals x players of a person's match at most: the seats' time it holds (the bots', the person's)."""
MATCH_SECONDS = 1800.0
"""Wall time of a person's match: past it, the person forfeits and the match ends after the deal under way."""
IDLE_MOVES = 3
"""Moves of a person's match lost to the clock: at this many, the person forfeits, as past ``MATCH_SECONDS``."""
WATCH_SECONDS = 0.5
"""How often a person's match is looked at for time, idle moves and a forfeit."""
MAX_OPPONENTS = 7
CLOCK = 60.0
"""Seconds a move at a person's table (the person's, and the bots'): past it the fallback plays the move."""
MAX_BODY = 4096
"""Bytes of a request for a seat."""
STATUSES = ("people-running", "people-finished", "people-aborted", "people-refused")
"""The statuses of a match with a person (the ladder reads none of them)."""
AGENTS = ("heuristic", "heuristic:loose", "heuristic:tight", "random", "ppo")
"""Built-in agents the page suggests (the operator's ``--agent`` specs too); any agent a match may name is taken."""
STATIC = Path(__file__).parent / "static"
TABLE_STATIC = Path(__file__).parent.parent / "serve" / "static"


def visitor(address: str | None) -> str:
    """Whom a request comes from: its client address, an IPv6 one by its /64 (an IPv4 one mapped in IPv6 as IPv4)."""
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return (address or "?")[:64]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclasses.dataclass
class Seat:
    """A person's seat: admitted, then (once the page has said hello) playing its match."""

    name: str
    digest: str
    opponents: tuple[str, ...]
    deals: int
    expires: float
    visitor: str = "?"
    task: asyncio.Task[None] | None = None
    match: str | None = None  # its id, once stored
    ended: str | None = None  # why the person forfeited: the match ends after the deal under way

    @property
    def key(self) -> str:
        return PERSON_PREFIX + self.name

    @property
    def label(self) -> str:
        return "bot:" + self.key


class _Seating(Registry):
    """The registry a person's match is played with: its bots from the arena's registry, the person from the
    people's (``play_match`` seats, checks and releases them through it)."""

    def __init__(self, bots: Registry, people: Registry) -> None:
        super().__init__()
        self.bots, self.people = bots, people

    def _split(self, slots: list[BotSlot]) -> tuple[list[BotSlot], list[BotSlot]]:
        people = [s for s in slots if s.name.startswith(PERSON_PREFIX)]
        return people, [s for s in slots if not s.name.startswith(PERSON_PREFIX)]

    def seat(self, names: list[str], match: str, grace: float = GRACE_SECONDS) -> list[BotSlot]:
        mine = self.people.seat([n for n in names if n.startswith(PERSON_PREFIX)], match, grace)
        try:
            theirs = self.bots.seat([n for n in names if not n.startswith(PERSON_PREFIX)], match, grace)
        except ValueError:
            self.people.release(mine)
            raise
        by_name = {s.name: s for s in mine + theirs}
        return [by_name[n] for n in names]

    def check_forfeits(self, slots: list[BotSlot]) -> None:
        people, others = self._split(slots)
        self.people.check_forfeits(people)
        self.bots.check_forfeits(others)

    def release(self, slots: list[BotSlot]) -> None:
        people, others = self._split(slots)
        self.people.release(people)
        self.bots.release(others)


class People:
    """The people of one arena server: the seats admitted (on the event loop only) and their connections."""

    def __init__(self, arena: Arena, enabled: bool = False) -> None:
        self.arena = arena
        self.enabled = enabled
        self.registry = Registry()
        self.seats: dict[str, Seat] = {}
        self.requests: dict[str, tuple[float, float]] = {}  # visitor -> (allowance left, when it was counted)

    # ------------------------------------------------------------------------ admission
    def _forget_expired(self, now: float) -> None:
        for name in [n for n, s in self.seats.items() if s.task is None and now > s.expires]:
            del self.seats[name]

    def _count_request(self, who: str, now: float) -> None:
        """One more seat request of ``who``; ``TableError`` 429 past its allowance (``REQUEST_BURST``)."""
        rate = 1.0 / REQUEST_SECONDS

        def left(entry: tuple[float, float]) -> float:
            return min(float(REQUEST_BURST), entry[0] + (now - entry[1]) * rate)

        if who not in self.requests and len(self.requests) >= MAX_VISITORS:
            self.requests = {k: e for k, e in self.requests.items() if left(e) < REQUEST_BURST}
            if len(self.requests) >= MAX_VISITORS:
                raise TableError(429, "too many visitors ask for seats now: try again later")
        allowance = left(self.requests.get(who, (float(REQUEST_BURST), now)))
        if allowance < 1.0:
            raise TableError(429, f"too many seat requests: try again in {(1.0 - allowance) / rate:.0f} s")
        self.requests[who] = (allowance - 1.0, now)

    def _offered(self, spec: str) -> str:
        """An opponent as the match names it: a handle ``offered:K`` is the operator's ``K``-th ``--agent`` spec."""
        if spec.startswith(OFFERED):
            handles = _handles(self.arena.offered)
            if spec not in handles:
                raise TableError(400, f"{spec[:40]}: the server offers {list(handles) or 'no agent of its own'}")
            return handles[spec]
        return spec

    async def admit(self, body: Any, address: str | None = None) -> dict[str, Any]:
        """A seat for the request ``body`` from the client ``address`` (the admission rule and the bounds of the
        module docstring); ``TableError`` naming what is refused. The answer holds the seat token, shown this once."""
        if not self.enabled:
            raise TableError(403, "people are not admitted at this server (its operator starts it with --people)")
        who = visitor(address)
        self._count_request(who, time.monotonic())
        if not isinstance(body, dict) or set(body) - {"name", "opponents", "deals"}:
            raise TableError(400, 'expected {"name": ..., "opponents": [...], "deals": ...}')
        name = body.get("name")
        if not isinstance(name, str) or not protocol.NAME_PATTERN.fullmatch(name):
            raise TableError(400, "name: expected 1 to 32 of A-Z a-z 0-9 _ . -")
        opponents = body.get("opponents")
        if (
            not isinstance(opponents, list)
            or not 1 <= len(opponents) <= MAX_OPPONENTS
            or not all(isinstance(o, str) and 0 < len(o) <= 200 for o in opponents)
        ):
            raise TableError(400, f"opponents: expected 1 to {MAX_OPPONENTS} of bot:NAME and agent specs")
        deals = body.get("deals", 1)
        if isinstance(deals, bool) or not isinstance(deals, int) or not 1 <= deals <= MAX_DEALS:
            raise TableError(400, f"deals: expected an integer in 1..{MAX_DEALS}")
        players = 1 + len(opponents)
        if deals * players > MAX_GAMES:
            raise TableError(
                400, f"deals: at most {MAX_GAMES // players} at {players} players ({MAX_GAMES} seat-games a match)"
            )
        opponents = [self._offered(o) for o in opponents]
        connected = set(self.arena.registry.connected())
        named = [o[4:] for o in opponents if o.startswith("bot:")]
        if len(set(named)) != len(named):
            raise TableError(400, "opponents: a bot sits at most once at a table")
        for spec in opponents:
            if spec.startswith("bot:"):
                if spec[4:] not in connected:
                    raise TableError(409, f"{spec[:40]} is not connected now")
            else:
                self.arena.check_agent(spec)  # TableError 400 for an agent a match may not name
        if await asyncio.to_thread(_is_bot, self.arena.store, name):
            raise TableError(409, f"{name} is a bot's name: choose another")
        now = time.monotonic()
        self._forget_expired(now)
        mine = [s for s in self.seats.values() if s.visitor == who]
        if any(s.task is not None for s in mine):
            raise TableError(429, "your match is under way: one match at a time")
        for earlier in mine:  # one seat waiting per visitor: a new request replaces it (a page reloaded)
            del self.seats[earlier.name]
        if name in self.seats:
            raise TableError(409, f"{name} is seated already: choose another name")
        playing = sum(s.task is not None for s in self.seats.values())
        if playing >= MAX_PEOPLE:
            raise TableError(429, f"{MAX_PEOPLE} people are playing: try again later")
        if len(self.seats) - playing >= MAX_PENDING:
            raise TableError(429, f"{MAX_PENDING} seats wait for their people: try again in {SEAT_SECONDS:g} s")
        token = secrets.token_urlsafe(32)
        self.seats[name] = Seat(name, _digest(token), tuple(opponents), deals, now + SEAT_SECONDS, who)
        shown = [_shown(o, self.arena.offered) for o in opponents]
        return {"name": name, "token": token, "seconds": SEAT_SECONDS, "seats": [PERSON_PREFIX + name, *shown]}

    def claim(self, hello: protocol.Hello) -> Seat | None:
        """The seat whose token the hello carries (unexpired, or its match under way), or None."""
        seat = self.seats.get(hello.name) if self.enabled else None
        if seat is None or not hmac.compare_digest(seat.digest, _digest(hello.token)):
            return None
        if seat.task is None and time.monotonic() > seat.expires:
            return None
        return seat

    def start(self, seat: Seat) -> None:
        """Play the seat's match, once: called when its person has connected (on the event loop)."""
        if seat.task is None:
            seat.task = asyncio.get_running_loop().create_task(self._play(seat))

    # ------------------------------------------------------------------------ the match
    def _tell(self, seat: Seat, message: str) -> None:
        slot = self.registry.slots.get(seat.key)
        if slot is not None and slot.connection is not None:
            slot.connection.send(protocol.error(message))

    async def _play(self, seat: Seat) -> None:

        arena = self.arena
        try:
            if arena.running >= MAX_MATCHES:
                self._tell(seat, f"{MAX_MATCHES} matches are under way: try again later")
                return
            if sum(s.task is not None and s is not seat for s in self.seats.values()) >= MAX_PEOPLE:
                self._tell(seat, f"{MAX_PEOPLE} people are playing: try again later")
                return
            arena.running += 1
            try:
                await self._store_and_play(seat)
            finally:
                arena.running -= 1
        except Exception:
            log.exception("the match of person %s failed", seat.name)
            self._tell(seat, "the match failed (the server's log says why)")
        finally:
            if self.seats.get(seat.name) is seat:
                del self.seats[seat.name]

    async def _store_and_play(self, seat: Seat) -> None:
        arena, store = self.arena, self.arena.store
        seats = (seat.label, *seat.opponents)
        spec = MatchSpec(seats, len(seats), seat.deals, 0, CLOCK, "heuristic", GRACE_SECONDS)
        spec = spec.with_secret(arena.draw_secret())  # a person is a remote seat: the deals are a secret
        match = seat.match = secrets.token_hex(8)
        request = {**spec.request(), "people": [seat.name]}
        values = {"id": match, "created": time.time(), "request": json.dumps(request), "status": STATUSES[0]}
        await asyncio.wrap_future(store.submit(sa.insert(matches), values))

        async def on_game(k: int, r: int, rows: Any, saved: dict[str, Any]) -> None:
            await asyncio.wrap_future(store.game_finished(match, k, r, rows, saved))

        seating = _Seating(arena.registry, self.registry)
        watcher = asyncio.get_running_loop().create_task(self._watch(seat, match))
        try:
            report = await play_match(spec, match, seating, on_game, lambda: arena.stopping or seat.ended is not None)
        except ValueError as err:  # a bot that left, or sat down elsewhere, since the admission
            await asyncio.wrap_future(_settle(store, match, "people-refused", None))
            self._tell(seat, f"the match could not start: {err}")
            return
        finally:
            watcher.cancel()
        await asyncio.wrap_future(_settle(store, match, f"people-{report.status}", report.to_dict()))

    async def _watch(self, seat: Seat, match: str) -> None:
        """Until cancelled (the match is over): the person forfeits past ``MATCH_SECONDS``, at ``IDLE_MOVES`` moves
        lost to the clock, or away past the grace period; the fallback then plays the seat without waiting on the
        clock, and ``play_match`` stops at the end of the deal under way (the ``stop`` it is given)."""
        started = time.monotonic()
        while True:
            await asyncio.sleep(WATCH_SECONDS)
            slot = self.registry.slots.get(seat.key)
            if slot is None or slot.match != match:
                continue
            now = time.monotonic()
            counts = slot.counts
            if now - started > MATCH_SECONDS:
                why = f"the match has run for {MATCH_SECONDS / 60:g} minutes, the most a person's match may"
            elif counts is not None and counts.timeouts >= IDLE_MOVES:
                why = f"{counts.timeouts} of your moves ran out of time"
            elif slot.check_forfeit(now):
                why = f"you were away for more than {slot.grace:g} s"
            else:
                continue
            seat.ended = why
            slot.forfeited = True  # RemoteSeat.act: the fallback plays every move of the seat from now on
            if counts is not None:
                counts.forfeits = 1
            if slot.connection is not None:  # the turn it holds, if any, goes to the fallback now, not at its clock
                slot.connection.fault("disconnect", why)
            self._tell(seat, f"{why}: the fallback plays your seat, and the match ends after this deal")
            return

    # ------------------------------------------------------------------------ the routes
    def options(self) -> dict[str, Any]:
        """What the page needs (the module docstring); ``TableError`` 403 without ``--people``."""
        if not self.enabled:
            raise TableError(403, "people are not admitted at this server (its operator starts it with --people)")
        handles = _handles(self.arena.offered)
        return {"enabled": True, "bots": [f"bot:{n}" for n in self.arena.registry.connected()],
                "agents": list(dict.fromkeys([*AGENTS, *handles])),
                "offered": {handle: _agent_name(spec) for handle, spec in handles.items()},
                "max_deals": MAX_DEALS, "max_games": MAX_GAMES, "clock": CLOCK, "idle_moves": IDLE_MOVES,
                "match_seconds": MATCH_SECONDS}  # fmt: skip

    def routes(self) -> list[BaseRoute]:
        """``GET /play`` (the page), its static files, ``GET /api/people/options``, ``POST /api/people/seats``,
        ``GET /people`` and ``GET /api/people`` (the people's results)."""

        async def page(_request: Request) -> Response:
            return FileResponse(STATIC / "people.html", media_type="text/html")

        async def options(_request: Request) -> Response:
            try:
                return JSONResponse(self.options())
            except TableError as err:
                return JSONResponse({"error": err.message}, status_code=err.status)

        async def seats(request: Request) -> Response:
            try:
                refused = http_input.foreign_origin(request.headers)
                if refused is not None:
                    raise TableError(403, refused)
                http_input.check_json_type(request.headers)
                address = request.client.host if request.client is not None else None
                return JSONResponse(await self.admit(await http_input.read_json(request, MAX_BODY), address))
            except TableError as err:
                return JSONResponse({"error": err.message}, status_code=err.status)

        async def results(request: Request) -> Response:
            found = await asyncio.to_thread(people_matches, self.arena.store, 200, self.arena.offered)
            if request.url.path.startswith("/api/"):
                return JSONResponse({"matches": found})
            return HTMLResponse(people_page(found, {s.match for s in self.seats.values() if s.match is not None}))

        return [
            Route("/play", page, methods=["GET"]),
            Route("/api/people/options", options, methods=["GET"]),
            Route("/api/people/seats", seats, methods=["POST"]),
            Route("/people", results, methods=["GET"]),
            Route("/api/people", results, methods=["GET"]),
            Mount("/static", app=StaticFiles(directory=TABLE_STATIC), name="table-static"),
            Mount("/arena-static", app=StaticFiles(directory=STATIC), name="people-static"),
        ]


OFFERED = "offered:"
"""The handle of an operator's ``--agent`` spec at the people's page: ``offered:1``, ``offered:2``, ..."""


@functools.lru_cache(maxsize=1)
def _registered() -> frozenset[str]:
    """The registered agents' names, read once (the installed entry points: tens of ms, not for every request)."""
    import agents

    return frozenset(agents.registered())


def _handles(offered: Sequence[str]) -> dict[str, str]:
    """The operator's specs by handle; a bare registered name (``ppo``) is its own handle, it shows nothing more."""
    names = _registered()
    return {(spec if spec in names else f"{OFFERED}{k}"): spec for k, spec in enumerate(offered, 1)}


def _shown(spec: str, offered: Sequence[str]) -> str:
    """A seat as a visitor sees it: an operator's spec by its handle, anything else as it is."""
    for handle, full in _handles(offered).items():
        if full == spec:
            return handle
    return spec


def _agent_name(spec: str) -> str:
    """The registered agent an operator's spec builds, by name, or ``code`` for the operator's own code."""
    name = spec.partition(":")[0]
    return name if name in _registered() else "code"


def _settle(store: Store, match: str, status: str, report: dict[str, Any] | None) -> Any:
    """Store a person's match as settled (``Store.finish_match`` settles ``running`` matches only); a future."""
    values = {"status": status, "report": None if report is None else json.dumps(report)}
    return store.submit(sa.update(matches).where(matches.c.id == match, matches.c.status == STATUSES[0]), values)


def _is_bot(store: Store, name: str) -> bool:
    with store.engine.connect() as db:
        return db.execute(sa.select(bots.c.name).where(bots.c.name == name)).first() is not None


def people_matches(store: Store, limit: int = 200, offered: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The newest ``limit`` matches with a person: id, created, status, person, seats (an operator's ``offered``
    spec by its handle), deals played, and the person's chips per deal and table advantage (None before the match
    ends)."""
    found = []
    shown = {spec: handle for handle, spec in _handles(offered).items()}
    with store.engine.connect() as db:
        query = (
            sa.select(matches.c.id, matches.c.created, matches.c.status, matches.c.request, matches.c.report)
            .where(matches.c.status.in_(STATUSES))
            .order_by(matches.c.created.desc(), matches.c.id.desc())
            .limit(limit)
        )
        for match_id, created, status, request, report in db.execute(query):
            body, done = json.loads(request), json.loads(report) if report else None
            person = str(body.get("people", ["?"])[0])
            mine = [r for r in (done or {}).get("results", []) if r.get("label") == f"bot:{PERSON_PREFIX}{person}"]
            found.append({
                "match": match_id, "created": float(created), "status": status.removeprefix("people-"),
                "person": person, "seats": [shown.get(s, s) for s in body["seats"]],
                "deals": None if done is None else done.get("deals"),
                "chips": mine[0]["side"]["chips"] if mine else None,
                "advantage": mine[0]["advantage"] if mine else None,
            })  # fmt: skip
    return found


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def people_page(found: Sequence[dict[str, Any]], live: Collection[str] = ()) -> str:
    """The people's results as HTML, apart from the bots' ladder; every name escaped. ``live``: the matches this
    server plays now (another one still ``running`` was left by a server that stopped, or is another server's)."""

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:+.3f}"

    head = ["created (UTC)", "person", "at the table with", "status", "deals", "chips/deal", "table advantage"]
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{cell}</td>"
            for cell in (
                _e(time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(m["created"]))),
                _e(m["person"]),
                _e(", ".join(s for s in m["seats"] if not s.startswith(f"bot:{PERSON_PREFIX}"))),
                _e(m["status"] + (" (or interrupted)" if m["status"] == "running" and m["match"] not in live else "")),
                _e("-" if m["deals"] is None else m["deals"]),
                _e(number(m["chips"])),
                _e(number(m["advantage"])),
            )
        )
        + "</tr>"
        for m in found
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>People at the arena</title>'
        "<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
        "td,th{padding:.3em .7em;border-bottom:1px solid #ddd;text-align:left}</style></head><body>"
        "<h1>People at the arena</h1><p>Matches played by people, kept apart from the bots' ladder: they count in no "
        'rating. <a href="/play">Take a seat</a> &middot; <a href="/leaderboard">the bots\' leaderboard</a> &middot; '
        '<a href="/api/people">JSON</a></p><table><tr>'
        + "".join(f"<th>{_e(h)}</th>" for h in head)
        + "</tr>"
        + rows
        + "</table></body></html>"
    )
