"""The admission rule (the package's docstring, points 1 to 3) and the seats it has admitted: ``People``, one per
arena server, whose ``admit`` answers a seat request, ``claim`` finds the seat a hello's token opens, and ``start``
plays its match (``matchmaking``)."""

from __future__ import annotations

import asyncio
import hmac
import secrets
import time
from typing import Any

from train.arena import protocol
from train.arena.people import bounds, matchmaking, storage
from train.arena.people.handles import OFFERED, _handles, _shown
from train.arena.people.seats import Arena, Seat, digest, visitor
from train.arena.remote import Registry
from train.web.errors import TableError

__all__ = ["People"]


class People:
    """The people of one arena server: the seats admitted (on the event loop only) and their connections."""

    def __init__(self, arena: Arena, enabled: bool = False) -> None:
        self.arena = arena
        self.enabled = enabled
        self.registry = Registry()
        self.seats: dict[str, Seat] = {}
        self.requests: dict[str, tuple[float, float]] = {}  # visitor -> (allowance left, when it was counted)

    def _forget_expired(self, now: float) -> None:
        for name in [n for n, s in self.seats.items() if s.task is None and now > s.expires]:
            del self.seats[name]

    def _count_request(self, who: str, now: float) -> None:
        """One more seat request of ``who``; ``TableError`` 429 past its allowance (``REQUEST_BURST``)."""
        rate = 1.0 / bounds.REQUEST_SECONDS
        burst = float(bounds.REQUEST_BURST)

        def left(entry: tuple[float, float]) -> float:
            return min(burst, entry[0] + (now - entry[1]) * rate)

        if who not in self.requests and len(self.requests) >= bounds.MAX_VISITORS:
            self.requests = {k: e for k, e in self.requests.items() if left(e) < burst}
            if len(self.requests) >= bounds.MAX_VISITORS:
                raise TableError(429, "too many visitors ask for seats now: try again later")
        allowance = left(self.requests.get(who, (burst, now)))
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

    def check_enabled(self) -> None:
        """``TableError`` 403 unless the operator started the server with ``--people``."""
        if not self.enabled:
            raise TableError(403, "people are not admitted at this server (its operator starts it with --people)")

    async def admit(self, body: Any, address: str | None = None) -> dict[str, Any]:
        """A seat for the request ``body`` from the client ``address`` (the admission rule and the bounds of the
        package docstring); ``TableError`` naming what is refused. The answer holds the seat token, shown this once."""
        self.check_enabled()
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
            or not 1 <= len(opponents) <= bounds.MAX_OPPONENTS
            or not all(isinstance(o, str) and 0 < len(o) <= 200 for o in opponents)
        ):
            raise TableError(400, f"opponents: expected 1 to {bounds.MAX_OPPONENTS} of bot:NAME and agent specs")
        deals = body.get("deals", 1)
        if isinstance(deals, bool) or not isinstance(deals, int) or not 1 <= deals <= bounds.MAX_DEALS:
            raise TableError(400, f"deals: expected an integer in 1..{bounds.MAX_DEALS}")
        players = 1 + len(opponents)
        if deals * players > bounds.MAX_GAMES:
            raise TableError(
                400,
                f"deals: at most {bounds.MAX_GAMES // players} at {players} players "
                f"({bounds.MAX_GAMES} seat-games a match)",
            )
        opponents = [self._offered(o) for o in opponents]
        connected = set(self.arena.registry.connected())
        named = [o[4:] for o in opponents if o.startswith("bot:")]
        if len(set(named)) != len(named):
            raise TableError(400, "opponents: a bot sits at most once at a table")
        if named and self.arena.ladder is not None:
            # a visitor needs no token: were the ladder's bots seated at people's tables, anyone could hold them out of
            # the ladder (and choose whom their own bot meets there)
            raise TableError(
                409,
                "this server runs the ladder: its bots play the ladder, and a person's table seats "
                "built-in agents only",
            )
        for spec in opponents:
            if spec.startswith("bot:"):
                if spec[4:] not in connected:
                    raise TableError(409, f"{spec[:40]} is not connected now")
            else:
                self.arena.check_agent(spec)  # TableError 400 for an agent a match may not name
        if await asyncio.to_thread(storage.is_bot, self.arena.store, name):
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
        if playing >= bounds.MAX_PEOPLE:
            raise TableError(429, f"{bounds.MAX_PEOPLE} people are playing: try again later")
        if len(self.seats) - playing >= bounds.MAX_PENDING:
            raise TableError(
                429, f"{bounds.MAX_PENDING} seats wait for their people: try again in {bounds.SEAT_SECONDS:g} s"
            )
        token = secrets.token_urlsafe(32)
        self.seats[name] = Seat(name, digest(token), tuple(opponents), deals, now + bounds.SEAT_SECONDS, who)
        shown = [_shown(o, self.arena.offered) for o in opponents]
        return {
            "name": name,
            "token": token,
            "seconds": bounds.SEAT_SECONDS,
            "seats": [bounds.PERSON_PREFIX + name, *shown],
        }

    def claim(self, hello: protocol.Hello) -> Seat | None:
        """The seat whose token the hello carries (unexpired, or its match under way), or None."""
        seat = self.seats.get(hello.name) if self.enabled else None
        if seat is None or not hmac.compare_digest(seat.digest, digest(hello.token)):
            return None
        if seat.task is None and time.monotonic() > seat.expires:
            return None
        return seat

    def start(self, seat: Seat) -> None:
        """Play the seat's match, once: called when its person has connected (on the event loop)."""
        if seat.task is None:
            play = matchmaking.play(self.arena, self.registry, self.seats, seat)
            seat.task = asyncio.get_running_loop().create_task(play)
