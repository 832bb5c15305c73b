"""The time left of a run whose parts cost unlike amounts per deal, estimated from the work left in each part.

The ladder plays one field after another, and its fields differ by a factor of hundreds: a random field's deal
takes milliseconds, a ``pimc:16`` field searches at every decision. A bar that divides the deals left by the deals
per second so far is then far off: with the fast fields played first it showed 49 s left at 28% of a 4-minute run.
Here each part (a field at one table size) is weighed as the work of its deals: a duplicate deal at N players is
played N + 1 times, with the candidate in N of those seats and the field's agent in N * N, so its work is
``N * cost(candidate) + N * N * cost(field)``, an agent's cost per seat and deal taken from ``SEAT_COST``. The time
left is the work left in each part times the seconds per unit of work measured so far against that part's field,
or, against a field not yet begun, the costs' own milliseconds (shared by the workers, scaled by the speed of the
machine once a field has run long enough to tell it): a wrong cost is corrected as soon as its field begins.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tqdm import tqdm

__all__ = ["CALIBRATION_SECONDS", "SEAT_COST", "Part", "TimeLeft", "TimeLeftBar", "duplicate_work"]

SEAT_COST: Mapping[str, float] = {
    "random": 0.12,
    "heuristic:loose": 0.35,
    "heuristic": 0.25,
    "heuristic:tight": 0.25,
    "ppo": 0.2,
    "pimc:16": 17.0,
}
"""Milliseconds of CPU per seat and deal of each reference agent, as a field at 3, 5 and 7 players (2026-12-02,
the 2-core x86_64 machine shared with other work; ``evaluate("random", FIELD, players=[N], deals=20)``, for
pimc:16 ``deals=2`` at 3 and 5 players). An agent not listed (a user's bot) is taken to cost what the heuristic
does."""


def seat_cost(spec: str) -> float:
    return SEAT_COST.get(spec, SEAT_COST["heuristic"])


def duplicate_work(candidate: str, field: str, players: int) -> float:
    """The work of one duplicate deal of ``candidate`` against ``field`` at ``players`` seats, in ``SEAT_COST``'s
    unit: the candidate sits in ``players`` seats of the ``players + 1`` games, the field in the rest."""
    return players * seat_cost(candidate) + players * players * seat_cost(field)


@dataclasses.dataclass(frozen=True)
class Part:
    """One part of a run, played in turn: ``deals`` as the bar counts them, their ``work`` (0: nothing played),
    and the ``group`` whose parts share a pace (the field)."""

    group: str
    deals: int
    work: float


CALIBRATION_SECONDS = 5.0
"""A field whose work ``SEAT_COST`` puts at this many seconds or more tells the machine's speed; a shorter one is
mostly its start-up (a pool of workers started, agents built, a compilation), which would make every field not yet
begun look slow."""


class TimeLeft:
    """The seconds left of a run of ``parts`` played in their order, told of each deal done (``update``).

    The time since the previous update goes to the parts the deals of this one came from, in proportion to their
    work. A segment's first update (a run of parts of one group: one evaluation) holds its start-up more than its
    pace, so a field begun goes on at the pace of its later updates (of its first, while there is no other); a
    field not begun at ``SEAT_COST``'s milliseconds of CPU shared by ``workers``, scaled by how the fields of
    ``CALIBRATION_SECONDS`` or more of work ran against their costs."""

    def __init__(self, parts: Sequence[Part], workers: int = 1, clock: Callable[[], float] = time.monotonic) -> None:
        self.parts = list(parts)
        self.prior_pace = 0.001 / max(1, workers)  # seconds of wall time per unit of work, before any is measured
        self.clock = clock
        self.last = clock()
        self.index = 0  # the part being played
        self.done_in_part = 0.0  # its deals done
        # a segment: a run of parts of one group, one evaluation (the index of its first part)
        self.segment = [0] * len(self.parts)
        for number in range(1, len(self.parts)):
            same = self.parts[number].group == self.parts[number - 1].group
            self.segment[number] = self.segment[number - 1] if same else number
        self.begun: set[int] = set()
        self.seconds_of: dict[str, float] = {}  # of updates after a segment's first
        self.work_of: dict[str, float] = {}
        self.first_seconds_of: dict[str, float] = {}  # of segments' first updates
        self.first_work_of: dict[str, float] = {}

    def update(self, deals: float) -> None:
        now = self.clock()
        spent, self.last = now - self.last, now
        covered: list[tuple[int, str, float]] = []  # (segment, group, work) of the deals of this update
        left = deals
        while left > 0 and self.index < len(self.parts):
            part = self.parts[self.index]
            taken = min(left, part.deals - self.done_in_part)
            covered.append((self.segment[self.index], part.group, part.work * taken / part.deals if part.deals else 0))
            self.done_in_part += taken
            left -= taken
            if self.done_in_part >= part.deals:
                self.index, self.done_in_part = self.index + 1, 0.0
        covered = [c for c in covered if c[2] > 0]  # a part that plays nothing (against itself) takes no time
        work = sum(w for _, _, w in covered)
        starting = {segment for segment, _, _ in covered} - self.begun
        self.begun |= starting
        seconds, works = (self.first_seconds_of, self.first_work_of) if starting else (self.seconds_of, self.work_of)
        for _, group, w in covered:
            seconds[group] = seconds.get(group, 0.0) + spent * w / work
            works[group] = works.get(group, 0.0) + w

    def _pace(self, group: str) -> float | None:
        for seconds, works in ((self.seconds_of, self.work_of), (self.first_seconds_of, self.first_work_of)):
            if works.get(group, 0.0) > 0:
                return seconds[group] / works[group]
        return None

    def _unmeasured_pace(self) -> float:
        long = [g for g, work in self.work_of.items() if work * self.prior_pace >= CALIBRATION_SECONDS]
        if not long:
            return self.prior_pace
        return sum(self.seconds_of[g] for g in long) / sum(self.work_of[g] for g in long)

    def seconds(self) -> float | None:
        """The estimate, or None before any work has been measured."""
        if not self.work_of and not self.first_work_of:
            return None
        unmeasured = self._unmeasured_pace()
        total = 0.0
        for number in range(self.index, len(self.parts)):
            part = self.parts[number]
            done = self.done_in_part if number == self.index else 0.0
            work_left = part.work * (part.deals - done) / part.deals if part.deals else 0.0
            pace = self._pace(part.group)
            total += work_left * (unmeasured if pace is None else pace)
        return total

    def text(self) -> str:
        """``4:05`` (``1:02:03`` past an hour), or ``?`` before any work has been measured."""
        seconds = self.seconds()
        return "?" if seconds is None else tqdm.format_interval(seconds)


class TimeLeftBar(tqdm):
    """A tqdm bar of deals whose time left is ``TimeLeft``'s (``{left}`` in its format) rather than tqdm's, which
    assumes every deal left goes at the pace of those done."""

    def __init__(self, parts: Sequence[Part], workers: int = 1, **kwargs: Any) -> None:
        self.time_left = TimeLeft(parts, workers)
        kwargs.setdefault("bar_format", "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{left}, {rate_fmt}{postfix}]")
        super().__init__(total=sum(part.deals for part in parts), **kwargs)

    def update(self, n: float | None = 1) -> bool | None:
        self.time_left.update(1 if n is None else n)
        return super().update(n)

    @property
    def format_dict(self) -> dict[str, Any]:
        shown = dict(super().format_dict)
        shown["left"] = self.time_left.text()
        return shown
