"""A bot's matches (its page, ``/bots/NAME``) come from ``match_bots``, written with each match and filled from the
matches already stored when a database is migrated: the page reads the bot's newest matches by an index, whatever the
size of the arena's history."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from postgres_helpers import postgres_database  # noqa: F401 (a fixture)

pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")
pytest.importorskip("alembic", reason="the arena extra: pip install -e '.[arena]'")

import sqlalchemy as sa  # noqa: E402

from train.arena.records import bot_matches  # noqa: E402
from train.arena.storage import Store, database_url, games, match_bots, matches, migrate  # noqa: E402


@pytest.fixture(params=["sqlite", "postgresql"], name="database")
def either_database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of an empty database: a SQLite file, and a PostgreSQL database (which skips without a server)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'arena.sqlite3'}"
    return str(request.getfixturevalue("postgres"))


def _request(*seats: str) -> dict[str, Any]:
    return {
        "seats": list(seats),
        "players": len(seats),
        "deals": 1,
        "seed": 3,
        "clock": 1.0,
        "grace": 1.0,
        "fallback": "heuristic",
    }


def _stored_rows(database: str) -> list[dict[str, Any]]:
    """Matches as a server of revision 0005 stored them (no ``match_bots``), with one game each."""
    rows = [
        ("m-old", 1.0, _request("bot:alice", "heuristic"), "finished"),
        ("m-both", 2.0, _request("bot:alice", "bot:al", "random"), "aborted"),
        ("m-al", 3.0, _request("heuristic", "bot:al"), "interrupted"),
        ("m-running", 4.0, _request("bot:alice", "random"), "running"),
        ("m-people", 5.0, {**_request("bot:alice", "person:x"), "people": True}, "people-finished"),
        ("m-none", 6.0, _request("heuristic", "random"), "finished"),
        ("m-new", 7.0, _request("random", "bot:alice"), "finished"),
    ]
    engine = sa.create_engine(database_url(database))
    migrate(engine, "0005")
    with engine.begin() as db:
        for match, created, request, status in rows:
            db.execute(
                sa.insert(matches),
                {"id": match, "created": created, "request": json.dumps(request), "status": status, "report": None},
            )
            db.execute(
                sa.insert(games), {"match_id": match, "deal": 0, "rotation": 0, "outcomes": "[]", "history": "{}"}
            )
        db.execute(
            sa.insert(matches),
            {"id": "m-junk", "created": 8.0, "request": "not json", "status": "finished", "report": None},
        )
    engine.dispose()
    return [{"match": m, "created": c, "status": s, "seats": r["seats"]} for m, c, r, s in rows]


def test_migrating_lists_the_bots_of_the_matches_already_stored(database: str) -> None:
    stored = _stored_rows(database)
    store = Store(url=database)  # migrates to the newest revision, filling match_bots
    try:
        alice = bot_matches(store, "alice")
        # settled matches only, newest first, a name matched whole (al is not alice)
        assert [m["match"] for m in alice] == ["m-new", "m-both", "m-old"]
        assert alice[0] == {
            **next(s for s in stored if s["match"] == "m-new"),
            "seed": 3,
            "games": 1,
            "format": "rotations",
        }
        assert [m["match"] for m in bot_matches(store, "al")] == ["m-al", "m-both"]
        assert [m["match"] for m in bot_matches(store, "alice", limit=2)] == ["m-new", "m-both"]
        assert bot_matches(store, "nobody") == [] and bot_matches(store, "ALICE") == []
    finally:
        store.close()


def test_a_match_is_written_with_its_bots_in_one_transaction(database: str) -> None:
    store = Store(url=database)
    try:
        store.start_match("m-started", _request("bot:alice", "heuristic", "bot:bob")).result(timeout=60)
        store.queue_match("m-queued", _request("random", "bot:bob")).result(timeout=60)
        store.start_match("m-agents", _request("random", "heuristic")).result(timeout=60)
        with store.engine.connect() as db:
            rows = db.execute(sa.select(match_bots.c.match_id, match_bots.c.name).order_by(match_bots.c.name)).all()
        assert sorted(map(tuple, rows)) == [("m-queued", "bob"), ("m-started", "alice"), ("m-started", "bob")]
        assert bot_matches(store, "bob") == []  # running or pending: not listed
        store.finish_match("m-started", "finished", None).result(timeout=60)
        (listed,) = bot_matches(store, "bob")
        assert listed["match"] == "m-started" and listed["games"] == 0 and listed["created"] <= time.time()
    finally:
        store.close()


def test_a_bots_page_reads_by_the_index_not_every_match(tmp_path: Path) -> None:
    """The query plan, not a time: SQLite's plan for the page's query searches ``match_bots`` by its index (a scan
    of every match, as the page once made, is what grew with the arena's history)."""
    store = Store(tmp_path)
    asked: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any) -> None:
        if "match_bots" in statement:
            asked.append((statement, parameters))

    sa.event.listen(store.engine, "before_cursor_execute", record)
    try:
        bot_matches(store, "alice")
        ((statement, parameters),) = asked
        with store.engine.connect() as db:
            plan = " | ".join(str(row[-1]) for row in db.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters))
        assert "SEARCH match_bots USING" in plan and "ix_match_bots_name_created" in plan, plan
        assert "SCAN matches" not in plan and "TEMP B-TREE" not in plan, plan  # no sort of all its matches
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", record)
        store.close()


def test_the_benchmark_lists_what_the_old_scan_listed_and_refuses_bad_arguments() -> None:
    """``benchmarks/arena_bot_page.py``: on a history stored before revision 0006 and migrated, the page's query
    lists the same matches as the search of every request that it replaced (the script stops if they differ)."""
    run = [sys.executable, str(Path(__file__).resolve().parent.parent / "benchmarks" / "arena_bot_page.py")]
    ok = subprocess.run([*run, "--matches", "3000", "--repeats", "1"], capture_output=True, text=True, timeout=600)
    assert ok.returncode == 0, ok.stderr[-4000:]
    lines = ok.stdout.splitlines()
    assert lines[0] == "3,000 matches stored in " + lines[0].split(" in ")[1] and lines[1].startswith("migrated")
    assert lines[2].startswith("bot1: 200 matches listed; page ") and lines[3].startswith("rare: 3 matches listed")
    assert lines[4].startswith("nobody: 0 matches listed")
    for bad in (["--matches", "0"], ["--repeats", "101"], ["--matches", "x"]):
        refused = subprocess.run([*run, *bad], capture_output=True, text=True, timeout=600)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr and "error:" in refused.stderr
