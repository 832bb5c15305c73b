"""People at the table: a person in a browser takes a seat at a match with bots, over the bots' own protocol.

The page (``GET /play``: ``train/arena/static/people.html``, drawn with the browser table's ``table.js`` and
``table.css`` of ``train/serve/static``) asks for a seat, then speaks ``docs/protocol.md`` on ``/bot`` as a remote bot
does, with ``words: true`` for the labels of the legal moves. The admission rule (``docs/arena.md``, "People at the
table"):

1. Only where the operator started the server with ``--people`` (``People.enabled``); else 403.
2. ``POST /api/people/seats`` (JSON, from this server's own page: another ``Origin`` is refused) names the person,
   the opponents (each ``bot:NAME`` of a bot connected now, or a built-in agent the server offers, as a match of the
   operator may name) and the deals (1 to ``MAX_DEALS``). The name follows a bot's pattern, is no registered bot's
   name and no name seated now; at most ``MAX_PEOPLE`` seats are held at once.
3. The answer holds a seat token (32 random bytes; only its SHA-256 is kept, in memory): the page says hello with it
   within ``SEAT_SECONDS``, and the match starts then. It serves to reconnect until the match ends, then it is
   forgotten.

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
import hashlib
import hmac
import html
import json
import logging
import secrets
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from train.arena import protocol
from train.arena.match import MatchSpec, play_match
from train.arena.remote import GRACE_SECONDS, BotSlot, Registry
from train.arena.storage import Store, bots, matches
from train.serve import http_input
from train.serve.tables import TableError

if TYPE_CHECKING:
    from train.arena.server import Arena

__all__ = [
    "CLOCK",
    "MAX_DEALS",
    "MAX_PEOPLE",
    "PERSON_PREFIX",
    "SEAT_SECONDS",
    "STATUSES",
    "People",
    "Seat",
    "people_matches",
    "people_page",
]

log = logging.getLogger("bourre.arena")

PERSON_PREFIX = "person:"
"""A person's key at the table (``bot:person:NAME``): no bot's name holds a colon."""
SEAT_SECONDS = 120.0
"""A seat token not used to connect within this long is forgotten."""
MAX_PEOPLE = 8
"""Seats held by people at once (admitted or playing); one more is refused (429)."""
MAX_DEALS = 10
"""Deals of a person's match at most (each played once per rotation of the seats)."""
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
    task: asyncio.Task[None] | None = None
    match: str | None = None  # its id, once stored

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

    # ------------------------------------------------------------------------ admission
    def _forget_expired(self, now: float) -> None:
        for name in [n for n, s in self.seats.items() if s.task is None and now > s.expires]:
            del self.seats[name]

    async def admit(self, body: Any) -> dict[str, Any]:
        """A seat for the request ``body`` (the admission rule of the module docstring); ``TableError`` naming what
        is refused. The answer holds the seat token, shown this once."""
        if not self.enabled:
            raise TableError(403, "people are not admitted at this server (its operator starts it with --people)")
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
        if name in self.seats:
            raise TableError(409, f"{name} is seated already: choose another name")
        if len(self.seats) >= MAX_PEOPLE:
            raise TableError(429, f"{MAX_PEOPLE} people are seated: try again later")
        token = secrets.token_urlsafe(32)
        self.seats[name] = Seat(name, _digest(token), tuple(opponents), deals, now + SEAT_SECONDS)
        return {"name": name, "token": token, "seconds": SEAT_SECONDS, "seats": [PERSON_PREFIX + name, *opponents]}

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
        from train.arena.server import MAX_MATCHES

        arena = self.arena
        try:
            if arena.running >= MAX_MATCHES:
                self._tell(seat, f"{MAX_MATCHES} matches are under way: try again later")
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
        try:
            report = await play_match(spec, match, seating, on_game, lambda: arena.stopping)
        except ValueError as err:  # a bot that left, or sat down elsewhere, since the admission
            await asyncio.wrap_future(_settle(store, match, "people-refused", None))
            self._tell(seat, f"the match could not start: {err}")
            return
        await asyncio.wrap_future(_settle(store, match, f"people-{report.status}", report.to_dict()))

    # ------------------------------------------------------------------------ the routes
    def options(self) -> dict[str, Any]:
        connected = self.arena.registry.connected()
        return {"enabled": self.enabled, "bots": [f"bot:{n}" for n in connected],
                "agents": list(dict.fromkeys([*AGENTS, *self.arena.offered])), "max_deals": MAX_DEALS}  # fmt: skip

    def routes(self) -> list[BaseRoute]:
        """``GET /play`` (the page), its static files, ``GET /api/people/options``, ``POST /api/people/seats``,
        ``GET /people`` and ``GET /api/people`` (the people's results)."""

        async def page(_request: Request) -> Response:
            return FileResponse(STATIC / "people.html", media_type="text/html")

        async def options(_request: Request) -> Response:
            return JSONResponse(self.options())

        async def seats(request: Request) -> Response:
            try:
                refused = http_input.foreign_origin(request.headers)
                if refused is not None:
                    raise TableError(403, refused)
                http_input.check_json_type(request.headers)
                return JSONResponse(await self.admit(await http_input.read_json(request, MAX_BODY)))
            except TableError as err:
                return JSONResponse({"error": err.message}, status_code=err.status)

        async def results(request: Request) -> Response:
            found = await asyncio.to_thread(people_matches, self.arena.store)
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


def _settle(store: Store, match: str, status: str, report: dict[str, Any] | None) -> Any:
    """Store a person's match as settled (``Store.finish_match`` settles ``running`` matches only); a future."""
    values = {"status": status, "report": None if report is None else json.dumps(report)}
    return store.submit(sa.update(matches).where(matches.c.id == match, matches.c.status == STATUSES[0]), values)


def _is_bot(store: Store, name: str) -> bool:
    with store.engine.connect() as db:
        return db.execute(sa.select(bots.c.name).where(bots.c.name == name)).first() is not None


def people_matches(store: Store, limit: int = 200) -> list[dict[str, Any]]:
    """The newest ``limit`` matches with a person: id, created, status, person, seats, deals played, and the person's
    chips per deal and table advantage (None before the match ends)."""
    found = []
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
                "person": person, "seats": body["seats"], "deals": None if done is None else done.get("deals"),
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
