"""``bourre ladder``'s time left (``train.eval.time_left``): from the work left against each field, not from the
deals left at the pace of the fast fields played first."""

from __future__ import annotations

import io

import pytest

from train.eval import ladder
from train.eval.time_left import CALIBRATION_SECONDS, Part, TimeLeft, TimeLeftBar, duplicate_work


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _play(estimate: TimeLeft, clock: Clock, deals: int, seconds_per_deal: float, step: int = 5) -> None:
    for _ in range(deals // step):
        clock.now += step * seconds_per_deal
        estimate.update(step)


def test_a_slow_field_after_fast_ones_is_counted_at_its_cost() -> None:
    """Three fast fields, each mostly its half-second start-up, then pimc:16 on a machine 1.5 times slower than
    ``SEAT_COST``: at its start the estimate is its time, where the deals left at the pace so far say a fraction."""
    fields = ["random", "heuristic", "heuristic:tight", "pimc:16"]
    parts = [Part(field, 120, 120 * duplicate_work("heuristic", field, 5)) for field in fields]
    clock = Clock()
    estimate = TimeLeft(parts, workers=1, clock=clock)
    for field in fields[:3]:
        clock.now += 0.5  # the evaluation's start-up
        _play(estimate, clock, 120, duplicate_work("heuristic", field, 5) / 1000)
    slow = 1.5 * duplicate_work("heuristic", "pimc:16", 5) / 1000  # seconds a deal
    truth, naive = 120 * slow, clock.now / 360 * 120  # naive: the deals left at the pace of the deals done
    left = estimate.seconds()
    assert left is not None and abs(left - truth) < 0.4 * truth
    assert naive < truth / 10  # what the bar of deals said
    _play(estimate, clock, 60, slow)  # the slow field begun: from then on, its own pace
    assert estimate.seconds() == pytest.approx(60 * slow, rel=0.01)


def test_a_field_of_enough_work_tells_the_machine_speed() -> None:
    """A field whose costs make ``CALIBRATION_SECONDS`` or more, run twice as slow as they say, scales the fields
    not begun; a short one, however slow (its start-up, a compilation), does not."""
    parts = [Part("a", 10, 1000.0), Part("b", 10, 40_000.0), Part("c", 10, 4000.0)]
    clock = Clock()
    estimate = TimeLeft(parts, workers=2, clock=clock)
    assert estimate.seconds() is None and estimate.text() == "?"
    _play(estimate, clock, 10, 30.0, step=1)  # a: 5 minutes of compiling for half a second of work
    assert estimate.seconds() == pytest.approx((40_000 + 4000) * 0.001 / 2)
    assert CALIBRATION_SECONDS <= 40_000 * 0.001 / 2
    _play(estimate, clock, 10, 4.0, step=1)  # b: 40 s for 20 s of cost
    assert estimate.seconds() == pytest.approx(4000 * 0.001 / 2 * 2)


def test_a_cell_that_plays_nothing_takes_no_time() -> None:
    """The candidate against its own agent: the bar moves by its deals at once, and nothing is waited for."""
    parts = [Part("a", 10, 10.0), Part("b", 10, 0.0), Part("a", 10, 10.0)]
    clock = Clock()
    estimate = TimeLeft(parts, clock=clock)
    _play(estimate, clock, 10, 1.0, step=1)
    estimate.update(10)  # the skipped cell
    assert estimate.seconds() == pytest.approx(10.0)  # the last part at a's pace


def test_one_update_per_evaluation_still_gives_an_estimate() -> None:
    """Ray's backend moves the bar once an evaluation's tasks are back."""
    parts = [Part("a", 10, 10.0), Part("a", 10, 30.0)]
    clock = Clock()
    estimate = TimeLeft(parts, clock=clock)
    clock.now = 5.0
    estimate.update(10)
    assert estimate.seconds() == pytest.approx(15.0)


def test_the_bar_shows_the_estimate() -> None:
    out = io.StringIO()
    clock = Clock()
    parts = [Part("a", 10, 10.0), Part("a", 10, 100.0)]
    with TimeLeftBar(parts, file=out, ncols=100, mininterval=0) as bar:
        bar.time_left = TimeLeft(parts, clock=clock)
        for _ in range(10):
            clock.now += 1.0
            bar.update(1)
        assert "<01:40," in str(bar) and "10/20" in str(bar)


def test_the_ladder_weighs_its_cells_by_field_and_table_size() -> None:
    parts = ladder._parts("heuristic", ladder.LADDERS[1], [3, 5, 7], 40)
    assert [p.group for p in parts[:3]] == ["random"] * 3 and sum(p.deals for p in parts) == 40 * 18
    work = {(p.group, n): p.work for p, n in zip(parts, [3, 5, 7] * 6, strict=True)}
    assert work[("heuristic", 5)] == 0.0  # against itself: not played
    assert work[("pimc:16", 7)] > work[("pimc:16", 3)] > 50 * work[("random", 3)]
