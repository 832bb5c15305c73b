"""The arena's writer (``train.arena.storage.Store``): the same deal's all-field table stored twice keeps the first
(an operator's match of built-in agents asked again with one seed once failed, and left the match running), and a
write that fails fails alone, not the writes queued in the same transaction with it (a ladder match's games)."""

from __future__ import annotations

import concurrent.futures
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")

import sqlalchemy as sa  # noqa: E402

from train.arena.records import baselines, insert_baseline  # noqa: E402
from train.arena.storage import Store, bots  # noqa: E402


def _stored_baselines(store: Store) -> list[tuple[Any, ...]]:
    with store.engine.connect() as db:
        return [tuple(row) for row in db.execute(sa.select(baselines.c.deal, baselines.c.outcomes))]


def test_an_all_field_table_stored_twice_keeps_the_first(tmp_path: Path) -> None:
    store = Store(tmp_path)
    try:
        key = ("heuristic", 3, 11, 0)
        first = insert_baseline(store, key, np.array([[1, 2]]), {"deal": "first"})
        again = insert_baseline(store, key, np.array([[3, 4]]), {"deal": "again"})
        assert first.result(10) == 1 and again.result(10) == 0  # rows inserted: the second kept the first
        assert _stored_baselines(store) == [(0, json.dumps([[1, 2]]))]
    finally:
        store.close()


def test_a_failing_write_fails_alone_not_the_writes_queued_with_it(tmp_path: Path) -> None:
    store = Store(tmp_path)
    try:
        store.add_bot("alice")
        queued: list[concurrent.futures.Future[Any]] = [concurrent.futures.Future() for _ in range(3)]
        row = {"field": "random", "players": 2, "seed": 5, "outcomes": "[]", "history": "{}"}
        # queued before the writer looks, so that the three are one batch, the bad one between the others
        store._writes.put((store.insert_or_keep(baselines), {**row, "deal": 0}, queued[0]))
        store._writes.put((sa.insert(bots), {"name": "alice", "token_sha256": "0" * 64, "created": 0.0}, queued[1]))
        store._writes.put((store.insert_or_keep(baselines), {**row, "deal": 1}, queued[2]))
        store._writes.put(None)
        store._write_loop()
        assert queued[0].result(0) == 1 and queued[2].result(0) == 1
        with pytest.raises(sa.exc.IntegrityError):  # a second bot of one name
            queued[1].result(0)
        assert sorted(deal for deal, _ in _stored_baselines(store)) == [0, 1]
    finally:
        store.close()
