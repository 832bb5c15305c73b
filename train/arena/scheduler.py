"""The ladder's scheduler: connected bots are paired into duplicate matches, continuously (``bourre arena serve
--ladder``).

The pairing rule, ``next_match`` (a pure function: the idle bots' counts in, the next match out):

1. Among the bots connected and in no match (*idle*), the one with the fewest matches goes first; ties go to the
   larger OpenSkill sigma (the less certain rating), then to the name. But a bot that has been passed over, while
   idle, for at least as many scheduled matches as there are idle bots is *overdue*, and the overdue bot that has
   waited longest goes first.
2. It plays a *peer match* when another bot is idle and it has played fewer peer matches than reference matches;
   otherwise a *reference match*.
3. A reference match puts it alone among ``N - 1`` copies of a reference agent ``F``: the cell (``F``, ``N``) it
   has played least, ties in the order of ``fields`` then ``sizes``. The server also plays each of its deals once
   at the all-field table (``F`` in every seat), the par of the replacement advantage (``train.arena.ratings``).
4. A peer match seats it with the other idle bots, least-played first, at the table size its peer matches have
   used least (cycling through ``sizes``); seats left over are copies of one reference agent (cycling through
   ``fields``).
5. With ``peers_only`` (``--ladder-peers-only``) there is no reference match: a bot plays a peer match whenever
   another bot is idle, and waits while it is the only idle one. Its bots then get no ladder rating (that needs the
   reference matches), only OpenSkill; it is for a ladder of bots among themselves, and for measuring the server
   on remote decisions alone (``benchmarks/arena_processes.py``: the reference agents' seats would be the server's
   own work, in threads, beside them).

No connected bot waits long: least-played first alone would make a bot with many matches wait until every newcomer
has caught up with it, so the wait is also capped. A bot that stays idle is overdue after as many scheduled
matches as there are idle bots; among bots idle the whole time, the one idle longer has waited longer, so no
later bot overtakes it, and it goes first within as many more matches as there are bots: a wait of at most twice
the bots, in matches (``tests/test_arena_ladder.py`` runs the rule over many steps with bots that come and go).
Every match is dealt from a fresh secret (``train.arena.match.draw_secret``) and plays each deal once, paired with
its par game (``train.arena.match``): a settled match's hand histories are public, and a bot must never meet a deal
it has seen or read. The par game of a reference match is its all-field table (the reference agent in every seat),
stored with the match's games (``records.baselines``): the ladder rating pairs the bot's game with it.

Several servers may share one database, each with its own bots (a bot connects to any of them). Each server's
scheduler plans from the bots connected to it, and goes through the database's queue: it first claims
(``Store.claim_match`` with its idle bots) the oldest pending match whose bots are all idle here, queued by whichever
server; only when there is none does it queue the match the rule plans (``Store.queue_match``) and claim it. A
server plays only what it has claimed, so no match is played twice, and a match it queued stays pending for any
server that can play it. The server's lifespan also keeps its liveness lock and sweeps the matches of servers that
are gone (``Store.keep_alive``, every ``liveness.LIVENESS_SECONDS``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from train.arena import liveness
from train.arena.match import DEFAULT_CLOCK, MAX_CLOCK, MAX_DEALS, MAX_MATCHES, MatchSpec, draw_secret
from train.arena.ratings import Standings
from train.arena.records import Book
from train.arena.remote import GRACE_SECONDS, MAX_GRACE
from train.arena.storage import Store
from train.eval.ladder import LADDERS, PLAYERS, VERSION

__all__ = ["BotStats", "LadderConfig", "Ladder", "Planned", "keep_alive", "lifespan", "next_match"]

log = logging.getLogger("bourre.arena")

Cell = tuple[str, int]
SESSION_RULES = {"pot_limit": 20}
"""The house rule of the ladder's sessions: the pot capped at 20 chips, as many houses play, which also keeps the
spread of session results within reach of a rating (docs/evaluation.md, "Sessions: the game as played")."""


@dataclasses.dataclass(frozen=True)
class LadderConfig:
    """What ``bourre arena serve --ladder`` schedules."""

    fields: tuple[str, ...] = LADDERS[VERSION]  # the reference agents, as bourre ladder uses them
    sizes: tuple[int, ...] = PLAYERS  # the table sizes
    deals: int = 10  # deals of a match, each played once
    tables: int = 2  # scheduled matches at once
    clock: float = DEFAULT_CLOCK
    grace: float = GRACE_SECONDS
    # The moves a bot leaves to the server (a timeout, an illegal or malformed answer, absence) are played at random:
    # a rated match must never play a bot's seat better than the bot would, or a bot that answers nothing would take
    # the heuristic's rating.
    fallback: str = "random"
    peer_par: str = "heuristic"  # the par game of a match of bots alone (else: the built-in agent of the match)
    poll: float = 0.5  # seconds between two looks for idle bots
    peers_only: bool = False  # no reference match: a bot plays only with other bots (rule 5)
    # peer matches as sessions (the pot carried, rated once each by OpenSkill), under SESSION_RULES; reference
    # matches stay single deals, the ladder rating's cells
    peer_sessions: bool = False

    def __post_init__(self) -> None:
        if not self.fields or not self.sizes:
            raise ValueError("ladder: at least one reference agent and one table size")
        if any(not 2 <= n <= 8 for n in self.sizes):
            raise ValueError(f"ladder: table sizes are 2..8, got {list(self.sizes)}")
        if not 1 <= self.deals <= MAX_DEALS:
            raise ValueError(f"--ladder-deals: expected 1..{MAX_DEALS} deals a match, got {self.deals!r}")
        if not 1 <= self.tables <= MAX_MATCHES:
            raise ValueError(f"--ladder-tables: expected 1..{MAX_MATCHES} matches at once, got {self.tables!r}")
        # a clock of nan, 0 or 1e9 would start a ladder whose every match is refused, twice a second, in silence:
        # each setting is checked here, once, as a request's would be (MatchSpec.from_request)
        seconds = (
            ("--ladder-clock", self.clock, 0.001, MAX_CLOCK),
            ("grace", self.grace, 0.0, MAX_GRACE),
            ("poll", self.poll, 0.01, 60.0),
        )
        for name, value, low, high in seconds:
            if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
                raise ValueError(f"{name}: expected seconds in {low:g}..{high:g}, got {value!r}")


@dataclasses.dataclass(frozen=True)
class BotStats:
    """An idle bot as the scheduler sees it."""

    name: str
    matches: int = 0
    peers: int = 0  # peer matches
    reference: Mapping[Cell, int] = dataclasses.field(default_factory=dict)  # reference matches per cell
    sigma: float = 25 / 3  # OpenSkill's uncertainty (its default for a bot never rated)
    waited: int = 0  # matches scheduled since it became idle, without it

    @property
    def reference_matches(self) -> int:
        return sum(self.reference.values())


@dataclasses.dataclass(frozen=True)
class Planned:
    """A match to play: ``field`` is the reference agent of a reference match, None for a peer match."""

    seats: tuple[str, ...]
    secret: str  # the match's deals (train.arena.match.draw_secret)
    field: str | None

    @property
    def players(self) -> int:
        return len(self.seats)

    @property
    def bots(self) -> list[str]:
        return [s[4:] for s in self.seats if s.startswith("bot:")]

    def request(self, config: LadderConfig) -> dict[str, Any]:
        """The match request stored for it (``MatchSpec.from_request`` reads it back)."""
        session = config.peer_sessions and self.field is None
        spec = MatchSpec(
            self.seats,
            self.players,
            config.deals,
            0,
            config.clock,
            config.fallback,
            config.grace,
            dict(SESSION_RULES) if session else {},
            format="session" if session else "single",
            par=None if len(self.bots) < self.players else config.peer_par,
        )
        return spec.with_secret(self.secret).request()

    @classmethod
    def of(cls, request: Mapping[str, Any]) -> Planned:
        """The match of a stored request: a reference match when one bot sits among copies of one agent."""
        seats = tuple(str(s) for s in request["seats"])
        others = {s for s in seats if not s.startswith("bot:")}
        bots = len(seats) - sum(s in others for s in seats)
        secret = str(request.get("secret", ""))
        return cls(seats, secret, next(iter(others)) if bots == 1 and len(others) == 1 else None)


def next_match(idle: Sequence[BotStats], config: LadderConfig, secret: str) -> Planned | None:
    """The next match for bots ``idle`` (connected, in no match) by the pairing rule of the module docstring;
    None when no bot is idle (or, with ``config.peers_only``, when only one is). ``secret``: the match's deals."""
    if not idle:
        return None
    order = sorted(idle, key=lambda b: (b.matches, -b.sigma, b.name))
    overdue = [b for b in idle if b.waited >= len(idle)]
    if overdue:
        first = min(overdue, key=lambda b: (-b.waited, b.matches, -b.sigma, b.name))
        order.remove(first)
        order.insert(0, first)
    first, others = order[0], order[1:]
    if config.peers_only and not others:
        return None
    if others and (config.peers_only or first.peers < first.reference_matches):
        n = config.sizes[first.peers % len(config.sizes)]
        fill = config.fields[(first.peers // len(config.sizes)) % len(config.fields)]
        bots = [f"bot:{b.name}" for b in (first, *others[: n - 1])]
        return Planned((*bots, *[fill] * (n - len(bots))), secret, None)
    cells = [(f, n) for f in config.fields for n in config.sizes]
    field, n = min(cells, key=lambda c: (first.reference.get(c, 0), cells.index(c)))
    return Planned((f"bot:{first.name}", *[field] * (n - 1)), secret, field)


class Ladder:
    """Runs the scheduler on the server's event loop: ``arena`` is the server's ``Arena`` (its registry, its store,
    its ``play``), ``book`` the ratings it keeps."""

    def __init__(self, arena: Any, config: LadderConfig, book: Book, draw: Callable[[], str] | None = None) -> None:
        self.arena = arena
        self.config = config
        self.book = book
        self.draw = draw or draw_secret
        self.busy: set[str] = set()
        self.waited: dict[str, int] = {}  # idle bots: matches scheduled since each became idle
        self.paused = False  # True: no new match is scheduled (the running ones go on)
        self.scheduling = False  # a look for idle bots under way: it may still start a match it had planned
        self.tasks: set[asyncio.Task[None]] = set()
        self.scheduled = 0

    def idle(self, standings: Standings) -> list[BotStats]:
        """The bots connected, in no match and held by no waiting match request, with their counts from the stored
        matches."""
        found = []
        for name, slot in list(self.arena.registry.slots.items()):
            connection = slot.connection
            held = self.arena.wanted.get(name, 0) > 0  # a match request waits for it (Arena.bots_held)
            if connection is None or not connection.open or slot.match is not None or name in self.busy or held:
                continue
            standing = standings.bot(name)
            if standing is None:
                found.append(BotStats(name))
                continue
            cells = {(c.field, c.players): c.matches for c in standing.cells}
            found.append(
                BotStats(
                    name,
                    standing.matches,
                    standing.matches - standing.reference_matches,
                    cells,
                    standing.sigma,
                    self.waited.get(name, 0),
                )
            )
        return found

    async def run(self) -> None:
        """Until cancelled: fill the free tables, look again every ``config.poll`` seconds."""
        waiting = False  # for the database: said once, not at every look
        while True:
            try:
                await self.schedule()
                if waiting:
                    log.warning("ladder: the database is back, scheduling again")
                waiting = False
            except sa.exc.DBAPIError as err:  # a database away a moment: one line, and again at the next look
                if not waiting:
                    log.warning("ladder: scheduling waits for the database (%s)", self.arena.store.reason(err))
                waiting = True
            except Exception:
                log.exception("ladder: scheduling failed")
            await asyncio.sleep(self.config.poll)

    async def schedule(self) -> None:
        self.scheduling = True
        try:
            await self._schedule()
        finally:
            self.scheduling = False

    async def _schedule(self) -> None:
        store: Store = self.arena.store
        while len(self.tasks) < self.config.tables and not self.paused:
            idle = self.idle(await asyncio.to_thread(self.book.standings))
            names = {b.name for b in idle}
            self.waited = {name: w for name, w in self.waited.items() if name in names}  # busy or gone: reset
            if not idle:
                return
            # a match queued already (by any server) that this server's idle bots can play, else the rule's next
            claimed = await asyncio.to_thread(store.claim_match, store.server_id, names)
            if claimed is None:
                planned = next_match(idle, self.config, self.draw())
                if planned is None:
                    return
                await asyncio.wrap_future(store.queue_match(secrets.token_hex(8), planned.request(self.config)))
                self.scheduled += 1
                claimed = await asyncio.to_thread(store.claim_match, store.server_id, names)
                if claimed is None:  # taken meanwhile by a server where the same bots are connected too
                    return
            planned = Planned.of(claimed["request"])
            for name in names:
                self.waited[name] = 0 if name in planned.bots else self.waited.get(name, 0) + 1
            self.busy.update(planned.bots)
            task = asyncio.create_task(self._play(planned, str(claimed["id"]), claimed["request"]))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _play(self, planned: Planned, match: str, request: dict[str, Any]) -> None:
        from train.web.errors import TableError

        try:
            spec = MatchSpec.from_request(request, stored=True)
            await self.arena.play(spec, claimed=match)
        except (TableError, ValueError) as err:  # a bot gone before it sat, or the server's matches all taken
            log.info("ladder: match %s not played: %s", ",".join(planned.seats), getattr(err, "message", err))
            await asyncio.wrap_future(self.arena.store.finish_match(match, "refused", None))
        except Exception:
            log.exception("ladder: match %s failed", ",".join(planned.seats))
        finally:
            try:
                await asyncio.to_thread(self.book.standings)  # the ratings after the match
            finally:
                self.busy.difference_update(planned.bots)


async def keep_alive(store: Store, every: float | None = None) -> None:
    """Until cancelled: hold the store's liveness lock and sweep the matches of servers that are gone
    (``Store.keep_alive``), every ``every`` seconds (default ``liveness.LIVENESS_SECONDS``)."""
    while True:
        try:
            swept = await asyncio.to_thread(store.keep_alive)
            if swept:
                log.warning("%d running match(es) of servers that are gone are marked interrupted", swept)
        except Exception:  # a database away for longer than the store waits: try again at the next round
            log.warning("the liveness check of server %s failed: trying again", store.server_id, exc_info=True)
        await asyncio.sleep(every or liveness.LIVENESS_SECONDS)


def lifespan(arena: Any) -> Callable[[Any], contextlib.AbstractAsyncContextManager[None]]:
    """Starlette's lifespan: the arena's ladder (``arena.ladder``, a ``Ladder`` or None) runs while the app does,
    and so does the liveness of its store (``keep_alive``: held before the first request is answered)."""

    @contextlib.asynccontextmanager
    async def span(_app: Any) -> AsyncIterator[None]:
        ladder: Ladder | None = getattr(arena, "ladder", None)
        store: Store | None = getattr(arena, "store", None)
        tasks = []
        if store is not None:
            await asyncio.to_thread(store.hold)
            tasks.append(asyncio.create_task(keep_alive(store)))
        if ladder is not None:
            tasks.append(asyncio.create_task(ladder.run()))
        try:
            yield
        finally:
            running = [*tasks, *(ladder.tasks if ladder is not None else ())]
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)

    return span
