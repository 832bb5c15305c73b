"""A person's match, from the claim of the seat to its settling: the person's seat and its bots seated together
(``Seating``), the match played and stored under the people's statuses, and the watch that makes the person forfeit
past ``MATCH_SECONDS``, at ``IDLE_MOVES`` moves lost to the clock, or away past the grace period."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from typing import Any

from train.arena import protocol
from train.arena.match import MAX_MATCHES, MatchSpec, play_match
from train.arena.people import bounds, storage
from train.arena.people.seats import Arena, Seat
from train.arena.remote import GRACE_SECONDS, BotSlot, Registry

__all__ = ["Seating", "play", "tell"]

log = logging.getLogger("bourre.arena")


class Seating(Registry):
    """The registry a person's match is played with: its bots from the arena's registry, the person from the
    people's (``play_match`` seats, checks and releases them through it)."""

    def __init__(self, bots: Registry, people: Registry) -> None:
        super().__init__()
        self.bots, self.people = bots, people

    def _split(self, slots: list[BotSlot]) -> tuple[list[BotSlot], list[BotSlot]]:
        people = [s for s in slots if s.name.startswith(bounds.PERSON_PREFIX)]
        return people, [s for s in slots if not s.name.startswith(bounds.PERSON_PREFIX)]

    def seat(self, names: list[str], match: str, grace: float = GRACE_SECONDS) -> list[BotSlot]:
        mine = self.people.seat([n for n in names if n.startswith(bounds.PERSON_PREFIX)], match, grace)
        try:
            theirs = self.bots.seat([n for n in names if not n.startswith(bounds.PERSON_PREFIX)], match, grace)
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


def tell(people: Registry, seat: Seat, message: str) -> None:
    """Send the seat's person an error message (not fatal), if connected; ``people``: the people's registry."""
    slot = people.slots.get(seat.key)
    if slot is not None and slot.connection is not None:
        slot.connection.send(protocol.error(message))


async def play(arena: Arena, people: Registry, seats: dict[str, Seat], seat: Seat) -> None:
    """Play the seat's match to its end, then forget the seat (on the event loop). ``people``: the people's registry;
    ``seats``: the seats admitted (``People.seats``), whose matches under way count against ``MAX_PEOPLE``. A match
    the server has no room for is not started, and the person is told why."""
    try:
        if arena.running >= MAX_MATCHES:
            tell(people, seat, f"{MAX_MATCHES} matches are under way: try again later")
            return
        if sum(s.task is not None and s is not seat for s in seats.values()) >= bounds.MAX_PEOPLE:
            tell(people, seat, f"{bounds.MAX_PEOPLE} people are playing: try again later")
            return
        arena.running += 1
        try:
            await _store_and_play(arena, people, seat)
        finally:
            arena.running -= 1
    except Exception:
        log.exception("the match of person %s failed", seat.name)
        tell(people, seat, "the match failed (the server's log says why)")
    finally:
        if seats.get(seat.name) is seat:
            del seats[seat.name]


async def _store_and_play(arena: Arena, people: Registry, seat: Seat) -> None:
    store = arena.store
    seats = (seat.label, *seat.opponents)
    spec = MatchSpec(seats, len(seats), seat.deals, 0, bounds.CLOCK, "heuristic", GRACE_SECONDS)
    spec = spec.with_secret(arena.draw_secret())  # a person is a remote seat: the deals are a secret
    match = seat.match = secrets.token_hex(8)
    await asyncio.wrap_future(storage.start(store, match, {**spec.request(), "people": [seat.name]}))

    async def on_game(k: int, r: int, rows: Any, saved: dict[str, Any]) -> None:
        await asyncio.wrap_future(store.game_finished(match, k, r, rows, saved))

    seating = Seating(arena.registry, people)
    watcher = asyncio.get_running_loop().create_task(_watch(people, seat, match))
    try:
        generation = arena.store.generation  # raised if the server is judged gone meanwhile: the match stops
        report = await play_match(
            spec,
            match,
            seating,
            on_game,
            lambda: arena.stopping or seat.ended is not None,
            fenced=lambda: arena.store.generation != generation,
        )
    except ValueError as err:  # a bot that left, or sat down elsewhere, since the admission
        await asyncio.wrap_future(storage.settle(store, match, "people-refused", None))
        tell(people, seat, f"the match could not start: {err}")
        return
    finally:
        watcher.cancel()
    await asyncio.wrap_future(storage.settle(store, match, f"people-{report.status}", report.to_dict()))


async def _watch(people: Registry, seat: Seat, match: str) -> None:
    """Until cancelled (the match is over): the person forfeits past ``MATCH_SECONDS``, at ``IDLE_MOVES`` moves
    lost to the clock, or away past the grace period; the fallback then plays the seat without waiting on the
    clock, and ``play_match`` stops at the end of the deal under way (the ``stop`` it is given)."""
    started = time.monotonic()
    while True:
        await asyncio.sleep(bounds.WATCH_SECONDS)
        slot = people.slots.get(seat.key)
        if slot is None or slot.match != match:
            continue
        now = time.monotonic()
        counts = slot.counts
        if now - started > bounds.MATCH_SECONDS:
            why = f"the match has run for {bounds.MATCH_SECONDS / 60:g} minutes, the most a person's match may"
        elif counts is not None and counts.timeouts >= bounds.IDLE_MOVES:
            why = f"{counts.timeouts} of your moves ran out of time"
        elif slot.check_forfeit(now):
            why = f"you were away for more than {slot.grace:g} s"
        else:
            continue
        seat.ended = why
        slot.forfeited = True  # RemoteSeat.act_decision: the fallback plays every move of the seat from now on
        if counts is not None:
            counts.forfeits = 1
        if slot.connection is not None:  # the turn it holds, if any, goes to the fallback now, not at its clock
            slot.connection.fault("disconnect", why)
        tell(people, seat, f"{why}: the fallback plays your seat, and the match ends after this deal")
        return
