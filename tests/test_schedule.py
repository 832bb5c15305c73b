"""The seating pieces of the duplicate schedule (``train.schedule``) that evaluation and the arena share: the seeds of
a chunk's seats and the rotation of a table's entries undone."""

from __future__ import annotations

import numpy as np

from train import schedule as sched
from train.table import seated


def test_by_entry_undoes_the_seating_of_every_rotation() -> None:
    entries = ["a", "b", "c", "d", "e"]
    for r in range(-5, 11):
        by_seat = seated(entries, r)
        assert [by_seat[(i + r) % 5] for i in range(5)] == entries  # entry i in seat (i + r) % N
        assert sched.by_entry(np.asarray(by_seat), r).tolist() == entries


def test_by_entry_reads_a_rotations_outcome_rows_back_in_entry_order() -> None:
    rows = np.arange(4 * 6).reshape(4, 6)  # one row per seat
    back = sched.by_entry(rows, 3)
    np.testing.assert_array_equal(back[0], rows[3])  # entry 0 sat in seat 3
    np.testing.assert_array_equal(back[1], rows[0])
    np.testing.assert_array_equal(sched.by_entry(back, -3), rows)


def test_seat_seeds_are_the_agent_seeds_of_the_seats_of_a_chunk() -> None:
    seeds = sched.seat_seeds(11, 4, 7)
    assert seeds == [sched.agent_seed(11, 4, 7, 1 + s) for s in range(4)]
    assert len(set(seeds)) == 4 and seeds != sched.seat_seeds(11, 4, 8)
    assert seeds[:3] != sched.seat_seeds(11, 3, 7)  # the table size is part of the key
