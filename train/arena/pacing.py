"""The pace of the built-in seats at a table with a remote seat: how long a built-in agent thinks must not tell the
bots what it holds.

A search returns at once when it has one legal move and thinks longer the more it has; the heuristic's time also
grows with its legal moves. A bot that times the gap between its action and its next turn would read from it how
many legal moves the seats between them had (a red-team bot guessed "exactly one legal card" right 97% of the time
against ``pimc:16``). So each built-in seat's move is held back to the longest move that seat has made so far in the
match: a move then tells only that it was the slowest yet (a record, about ``ln(moves)`` times a match for moves of
one kind) or that it took longer than ``PACE_CAP_SECONDS``, past which a move is not held back further, so that one
stall of a loaded server cannot slow the rest of a match more than that. A seat's first move sets no pace: a search
seat's first move starts its worker process (a quarter of a second), which would have set the pace of every move.
docs/arena.md says what is measured and what is left.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import TypeVar

PACE_CAP_SECONDS = 0.25  # the most a built-in move is held back to
COARSE_MARGIN_SECONDS = 0.002  # the end of a hold slept by a thread, to the deadline itself

T = TypeVar("T")


class Pacer:
    """The moves of one match's built-in seats, each seat held back to its slowest move so far (at most the cap)."""

    def __init__(self, cap: float = PACE_CAP_SECONDS) -> None:
        if not cap >= 0:
            raise ValueError(f"pace cap: expected seconds >= 0, got {cap!r}")
        self.cap = cap
        self.slowest: dict[int, float] = {}  # seat key -> its longest move so far, at most ``cap``

    async def paced(self, seat: int, move: Awaitable[T]) -> T:
        """``move``'s result, given no sooner than the slowest earlier move of ``seat`` took."""
        start = time.monotonic()
        result = await move
        took = time.monotonic() - start
        if seat not in self.slowest:
            self.slowest[seat] = 0.0  # a seat's first move, which may start its worker, sets no pace
            return result
        floor = self.slowest[seat]
        if took >= floor:
            self.slowest[seat] = min(took, self.cap)
            return result
        # The event loop's timers wake at whole milliseconds after the loop last looked (epoll's timeout), so a
        # sleep of ``floor - took`` would end at a time that still depends on ``took`` within a millisecond, which a
        # bot can read from many moves. The loop sleeps until COARSE_MARGIN_SECONDS before the deadline; a thread
        # sleeps the rest to the deadline itself, whatever ``took`` was.
        deadline = start + floor
        coarse = deadline - time.monotonic() - COARSE_MARGIN_SECONDS
        if coarse > 0:
            await asyncio.sleep(coarse)
        await asyncio.to_thread(_sleep_until, deadline)
        return result


def _sleep_until(deadline: float) -> None:
    left = deadline - time.monotonic()
    if left > 0:
        time.sleep(left)
