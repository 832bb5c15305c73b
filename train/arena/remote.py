"""A remote bot's seat: its connection, and the agent that plays the seat on the clock.

The game never waits on the network for longer than the clock. Every table is a task on the server's event loop (no
thread per table: a turn goes out and its answer comes in without a hand-off between threads), and
``RemoteSeat.act_decision`` builds the turn from the ``Decision`` the table's loop yields (``train.table``), queues
it on the connection's writer and awaits the answer on a future, at most ``clock`` seconds. Whatever goes wrong (no
answer in time, an illegal or malformed answer, no connection) the bot is told once, in one ``error`` message, the
seat's fallback agent plays the move (in a worker thread, as every built-in agent does), and the fault is counted in
``SeatCounts``. A bot that comes back (a new connection with its token) within the match's grace period is handed
the next turn; one away for longer has forfeited its seat: the fallback plays it to the end of the match.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import agents
from agents.base import Agent
from train.arena import protocol
from train.table import Decision

__all__ = ["BotSlot", "Connection", "Registry", "RemoteSeat", "SeatCounts", "TurnContext", "GRACE_SECONDS", "MAX_GRACE"]

GRACE_SECONDS = 30.0
"""A bot that disconnects during a match has this long to come back before its seat is left to the fallback for
the rest of the match (the fallback plays its moves meanwhile); a match may ask for another (``grace``)."""
MAX_GRACE = 600.0
"""The longest grace period a match may ask for: an absent bot's seat is the fallback's for that long at most."""


@dataclasses.dataclass
class SeatCounts:
    """What happened at a remote seat in one match; every fault is a move the fallback played."""

    decisions: int = 0
    timeouts: int = 0
    illegal: int = 0
    malformed: int = 0
    absent: int = 0  # turns while the bot had no connection, within the grace period
    disconnects: int = 0
    forfeits: int = 0  # 1: away past the grace period, the bot lost its seat for the rest of the match
    forfeited: int = 0  # turns the fallback played after the forfeit

    @property
    def fallbacks(self) -> int:
        return self.timeouts + self.illegal + self.malformed + self.absent + self.forfeited

    def to_dict(self) -> dict[str, int]:
        return {**dataclasses.asdict(self), "fallbacks": self.fallbacks}


class _FaultError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _time_out(future: asyncio.Future[int]) -> None:
    if not future.done():
        future.set_exception(_FaultError("timeout", "no action in time"))


class Connection:
    """One live socket of a bot, used on the event loop only: tables call ``send`` and ``expect``; the socket's
    reader calls ``answer``, ``fault`` and ``closed``. ``observation`` and ``words``: what the bot's hello asked
    for with every turn. ``write``: sends a message's text at once, in order (``BotSocketProtocol.send_now``);
    without it messages are queued on ``outbox`` for a writer task to send."""

    def __init__(
        self, name: str, observation: bool, words: bool = False, write: Callable[[str], object] | None = None
    ) -> None:
        self.name = name
        self.observation = observation
        self.words = words
        self.write = write
        self.outbox: asyncio.Queue[str | None] = asyncio.Queue()
        self._pending: tuple[int, asyncio.Future[int]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # its socket's, found at the first turn
        self.open = True

    def send(self, message: Mapping[str, Any]) -> None:
        """Send a message, or queue it for the writer task."""
        if self.open:
            if self.write is not None:
                self.write(protocol.encode(message))
            else:
                self.outbox.put_nowait(protocol.encode(message))

    def expect(self, turn: int) -> asyncio.Future[int]:
        # the loop kept: before Python 3.12 each asyncio.get_running_loop() is a getpid system call (2 to 3 µs here)
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()
        self._pending = (turn, future)
        if not self.open:
            future.set_exception(_FaultError("disconnect", "disconnected"))
        return future

    def forget(self, turn: int) -> None:
        if self._pending is not None and self._pending[0] == turn:
            self._pending = None

    def answer(self, action: protocol.Action) -> bool:
        """An action for the pending turn; False when no turn of that number awaits one (late or made up)."""
        if self._pending is None or self._pending[0] != action.turn or self._pending[1].done():
            return False
        future = self._pending[1]
        self._pending = None
        future.set_result(action.action)
        return True

    def fault(self, kind: str, message: str) -> bool:
        """A malformed message or a lost socket: the pending turn, if any, is lost to the fallback (True: it was,
        and its table tells the bot)."""
        pending, self._pending = self._pending, None
        if pending is not None and not pending[1].done():
            pending[1].set_exception(_FaultError(kind, message))
            return True
        return False

    def closed(self) -> None:
        self.open = False
        self.fault("disconnect", "disconnected")
        self.outbox.put_nowait(None)


class BotSlot:
    """A bot by name: its live connection (or none), and the match it sits in (or none)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.connection: Connection | None = None
        self.match: str | None = None
        self.counts: SeatCounts | None = None  # of the match it sits in
        self.left_at: float | None = None
        self.grace = GRACE_SECONDS  # of the match it sits in
        self.forfeited = False  # in the match it sits in
        # what a bot that comes back is sent to act again: the match_start of its match and the deal_start of the
        # game under way; and a match_end it was not connected to receive
        self.briefing: list[dict[str, Any]] = []
        self.missed: dict[str, Any] | None = None

    def catch_up(self) -> list[dict[str, Any]]:
        """What to send a bot on its return, once: its match and the game under way, or the end of a match that
        ended while it was away."""
        if self.match is not None:
            return list(self.briefing)
        missed, self.missed = self.missed, None
        return [] if missed is None else [missed]

    def check_forfeit(self, now: float) -> bool:
        """Whether the bot has forfeited its seat: away from its match for longer than the grace period. Checked
        when it would be needed (a turn, a return, the match's end), so no timer thread is kept per bot."""
        if (
            not self.forfeited
            and self.match is not None
            and self.connection is None
            and self.left_at is not None
            and now - self.left_at > self.grace
        ):
            self.forfeited = True
            if self.counts is not None:
                self.counts.forfeits = 1
        return self.forfeited


class Registry:
    """The bots the server knows of right now; one live connection per bot (per token) in this process (the server
    holds it in the database for the others: ``train.arena.holds``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.slots: dict[str, BotSlot] = {}

    def attach(self, connection: Connection) -> BotSlot:
        """``ValueError`` when the bot has a live connection already. A bot back after its match's grace period
        has forfeited its seat (``slot.forfeited``): it follows the match, and is sent no turn of it."""
        with self._lock:
            slot = self.slots.setdefault(connection.name, BotSlot(connection.name))
            if slot.connection is not None and slot.connection.open:
                raise ValueError(f"bot {connection.name!r} is connected already: one live connection per token")
            slot.check_forfeit(time.monotonic())  # before its absence ends: how long it was away decides
            slot.connection = connection
            slot.left_at = None
            return slot

    def is_live(self, name: str) -> bool:
        """Whether bot ``name`` has a live connection here."""
        with self._lock:
            slot = self.slots.get(name)
            return slot is not None and slot.connection is not None and slot.connection.open

    def detach(self, connection: Connection) -> None:
        with self._lock:
            slot = self.slots.get(connection.name)
            if slot is not None and slot.connection is connection:
                slot.connection = None
                slot.left_at = time.monotonic()
                if slot.counts is not None:
                    slot.counts.disconnects += 1
        connection.closed()

    def seat(self, names: list[str], match: str, grace: float = GRACE_SECONDS) -> list[BotSlot]:
        """Claim the named bots for a match: each must be connected and in no other match (``ValueError``); each
        has ``grace`` seconds to come back after a lost connection."""
        with self._lock:
            slots = []
            for name in names:
                slot = self.slots.get(name)
                if slot is None or slot.connection is None:
                    raise ValueError(f"bot:{name} is not connected")
                if slot.match is not None:
                    raise ValueError(f"bot:{name} is playing match {slot.match}")
                slots.append(slot)
            for slot in slots:
                slot.match = match
                slot.counts = SeatCounts()
                slot.grace = grace
                slot.forfeited = False
                slot.briefing = []
                slot.missed = None
            return slots

    def check_forfeits(self, slots: list[BotSlot]) -> None:
        """At the match's end: a bot still away past the grace period has forfeited (its report says so)."""
        with self._lock:
            now = time.monotonic()
            for slot in slots:
                slot.check_forfeit(now)

    def release(self, slots: list[BotSlot]) -> None:
        with self._lock:
            for slot in slots:
                slot.match = None
                slot.counts = None
                slot.forfeited = False
                slot.briefing = []

    def connected(self) -> list[str]:
        with self._lock:
            return sorted(name for name, slot in self.slots.items() if slot.connection is not None)


class FencedError(Exception):
    """The server was judged gone by another server of its database and its matches interrupted
    (``train.arena.storage``): no turn of them goes out any more."""


@dataclasses.dataclass
class TurnContext:
    """What a turn message needs that the table's ``Decision`` does not carry; the match runner keeps it current."""

    match: str
    rules: Any
    clock: float
    deal: int = 0
    chips: Callable[[], list[int]] = list
    turns: int = 0
    games: int = 1  # games of the match
    game: int = 0  # the game under way, from 1
    fenced: Callable[[], bool] = lambda: False  # the match's server was judged gone: stop before the next turn

    def next_turn(self) -> int:
        self.turns += 1
        return self.turns


class RemoteSeat:
    """The seat of a remote bot at one match's table: ``act_decision`` asks the bot, on the clock, else the
    fallback."""

    def __init__(self, slot: BotSlot, context: TurnContext, fallback: str, seed: int) -> None:
        self.slot = slot
        self.context = context
        self.name = f"bot:{slot.name}"
        self.fallback: Agent = agents.make(fallback, seed)
        self.fallback_spec = fallback

    def reset(self) -> None:
        reset = getattr(self.fallback, "reset", None)
        if callable(reset):
            reset()

    def send(self, message: Mapping[str, Any]) -> None:
        """Send ``message`` to the bot if it is connected; keep what a bot that comes back needs (``catch_up``)."""
        slot, kind = self.slot, message["type"]
        if kind == "match_start":
            slot.briefing = [dict(message)]
        elif kind == "deal_start":
            slot.briefing = [*slot.briefing[:1], dict(message)]
        elif kind == "deal_end":
            slot.briefing = slot.briefing[:1]
        connection = slot.connection
        if connection is not None:
            connection.send(message)
        elif kind == "match_end":
            slot.missed = dict(message)

    async def act_decision(self, decision: Decision) -> int:
        """The bot's action at ``decision`` (the table's, of this seat): its turn is built from the decision's
        observation alone, as the table's loop yields it."""
        observation = decision.observation
        counts = self.slot.counts if self.slot.counts is not None else SeatCounts()
        counts.decisions += 1
        ctx = self.context
        if ctx.fenced():  # its secret may be public by now: no turn of this match is sent any more
            raise FencedError(f"match {ctx.match}: this server was judged gone; the match is stopped")
        number = ctx.next_turn()
        if self.slot.check_forfeit(time.monotonic()):
            counts.forfeited += 1  # for the rest of the match, even once the bot is back: it is sent no turn
            return await self._fallback(observation)
        connection = self.slot.connection
        if connection is None:
            counts.absent += 1
            return await self._fallback(observation)
        clock_ms = int(round(ctx.clock * 1000))
        mask = observation["action_mask"]
        message = protocol.turn_from_view(
            (observation["observation"], mask),
            match=ctx.match,
            number=number,
            deal=ctx.deal,
            rules=ctx.rules,
            seat=decision.seat,
            clock_ms=clock_ms,
            chips=ctx.chips(),
            with_observation=connection.observation,
            with_words=connection.words,
            game=(ctx.game, ctx.games),
        )
        future = connection.expect(number)
        connection.send(message)
        # the clock as a timer on the future itself: asyncio.wait_for would wrap the future in a task of its own for
        # every move
        clock = future.get_loop().call_later(ctx.clock, _time_out, future)
        try:
            action = await future
        except _FaultError as fault:
            if fault.kind == "timeout":
                connection.forget(number)
                counts.timeouts += 1
                connection.send(protocol.error(self._played(f"no action within {clock_ms} ms"), turn=number))
            elif fault.kind == "disconnect":
                counts.absent += 1
            else:
                counts.malformed += 1
                connection.send(protocol.error(self._played(str(fault)), turn=number))
            return await self._fallback(observation)
        finally:
            clock.cancel()
        if not 0 <= action < len(mask) or not mask[action]:
            counts.illegal += 1
            legal = np.flatnonzero(mask).tolist()
            connection.send(protocol.error(self._played(f"action {action} is not legal (legal: {legal})"), turn=number))
            return await self._fallback(observation)
        return int(action)

    def _played(self, why: str) -> str:
        return f"{why}; the fallback ({self.fallback_spec}) played this move"

    async def _fallback(self, observation: Mapping[str, np.ndarray]) -> int:
        return int(await asyncio.to_thread(self.fallback.act, dict(observation)))  # type: ignore[arg-type]
