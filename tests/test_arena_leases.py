"""Liveness that a dropped database session cannot fake (PostgreSQL; skips without a server, tests/postgres_helpers.py).

A server's liveness lock is one database session: when that session alone drops (reproduced with
``pg_terminate_backend``) while the server lives, another server once took the lock within 1.5 s and marked the live
server's match ``interrupted``, its hand histories and seed then served while it was still played, and the live
server's report lost at the end. A server is now judged gone only when its lock is free and its heartbeat older than
the grace period; one judged gone that lives on is fenced (its matches stop) and its report is kept."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_helpers import WAIT, Recorder, ask_for_match, free_port, serve_process
from postgres_helpers import postgres_database  # noqa: F401 (the fixture)

sa = pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")

from train.arena import holds, liveness  # noqa: E402
from train.arena.client import play  # noqa: E402
from train.arena.histories import page  # noqa: E402
from train.arena.storage import Store, servers  # noqa: E402


@pytest.fixture(name="database")
def leased_database(postgres: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A migrated PostgreSQL database; beats every 0.2 s (a grace period of 2 s), swept however recently it started."""
    monkeypatch.setattr(liveness, "LIVENESS_SECONDS", 0.2)
    monkeypatch.setattr(liveness, "STEADY_SECONDS", 0.0)
    Store(url=postgres).close()
    yield postgres


def _terminate_life(store: Store) -> None:
    """Drop the one database session that holds ``store``'s liveness lock, as a reset connection would."""
    pid = store.liveness._life.connection.dbapi_connection.info.backend_pid
    with store.engine.connect() as db:
        db.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})


def test_a_dropped_lock_session_of_a_live_server_is_never_taken_for_its_death(database: str) -> None:
    one, two = Store(url=database), Store(url=database)
    try:
        one.hold(), two.hold()
        one.start_match("m1", {"seats": ["bot:alice", "random"], "players": 2, "deals": 1}).result()
        assert holds.take(one, "alice") is None
        _terminate_life(one)
        deadline = time.monotonic() + 3 * liveness.grace_seconds() / 4
        while time.monotonic() < deadline:  # within the grace period, its beat fresh: never judged gone
            assert two.sweep() == 0
            assert holds.take(two, "alice") == one.server_id
            assert one.match("m1")["status"] == "running"  # type: ignore[index]
            one.keep_alive()  # its own beat, and its lock taken again
            time.sleep(0.05)
        assert page(one, "m1") is None  # a running match's histories are never served
        assert one.generation == 0  # never fenced
        one.finish_match("m1", "finished", {"results": []}).result()
        assert one.match("m1")["status"] == "finished"  # type: ignore[index]
    finally:
        one.close()
        two.close()


def test_a_server_judged_gone_that_lives_on_is_fenced_and_its_report_kept(database: str) -> None:
    one, two = Store(url=database), Store(url=database)
    try:
        one.hold(), two.hold()
        one.start_match("m1", {"seats": ["bot:alice", "random"], "players": 2, "deals": 1}).result()
        _terminate_life(one)
        with one.engine.begin() as db:  # its beat as old as a paused process's past the grace period
            db.execute(sa.update(servers).where(servers.c.id == one.server_id).values(beat=servers.c.beat - 1000))
        assert two.sweep() == 1
        assert two.match("m1")["status"] == "interrupted"  # type: ignore[index]
        one.keep_alive()  # back: its beat finds its row gone
        assert one.generation == 1
        one.finish_match("m1", "aborted", {"results": ["kept"]}).result()
        stored = two.match("m1")
        assert stored is not None and stored["status"] == "interrupted" and "kept" in stored["report"]
        assert two.sweep() == 0  # it beats again, as a new life: nothing more of it is swept
    finally:
        one.close()
        two.close()


def test_a_closed_server_is_swept_at_once_and_a_dead_one_after_the_grace_period(database: str) -> None:
    one, two, three = Store(url=database), Store(url=database), Store(url=database)
    try:
        for store in (one, two, three):  # each alive before any match, as a serving store is from its start
            store.hold()
        one.start_match("m1", {"seats": []}).result()
        two.start_match("m2", {"seats": []}).result()
        one.close()  # says it is gone: its row deleted
        assert three.sweep() == 1 and three.match("m1")["status"] == "interrupted"  # type: ignore[index]
        _terminate_life(two)  # a server that dies leaves its lock free and its beat to age
        two.liveness._closed = True  # dead: it beats no more
        assert three.sweep() == 0  # its beat is fresh: not yet
        deadline = time.monotonic() + WAIT
        while three.sweep() == 0:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert three.match("m2")["status"] == "interrupted"  # type: ignore[index]
    finally:
        for store in (one, two, three):
            store.close()


def test_a_server_paused_past_the_grace_period_keeps_its_match(database: str, tmp_path: Path) -> None:
    """SIGSTOP holds the process and its database sessions: its lock stays held, so no other server judges it gone
    however long the pause; once it runs again, it plays the match to its end and settles it."""
    store = Store(url=database)
    token, operator = store.add_bot("slow"), store.add_operator("tests")
    port = free_port()
    process = serve_process(tmp_path, port, database=database)
    bot = Recorder(choose=lambda turn: (time.sleep(0.03), turn["legal"][0]["action"])[1])  # still playing when paused
    done: dict[str, Any] = {}
    try:

        def bot_plays() -> None:
            with contextlib.suppress(ConnectionError):  # its server is killed under it at the end
                play(bot, f"ws://127.0.0.1:{port}/bot", "slow", token, reconnect=False)

        threading.Thread(target=bot_plays, daemon=True).start()
        body = {"seats": ["heuristic", "bot:slow"], "deals": 60}
        deadline = time.monotonic() + WAIT
        while not bot.messages:
            threading.Thread(target=ask_for_match, args=(port, operator, body, done), daemon=True).start()
            time.sleep(0.5)
            assert time.monotonic() < deadline
        while len([m for m in bot.messages if m["type"] == "deal_end"]) < 2:
            time.sleep(0.05)
            assert time.monotonic() < deadline
        match = bot.messages[0]["match"]
        os.kill(process.pid, signal.SIGSTOP)
        try:
            paused = time.monotonic() + liveness.grace_seconds() + 1.0
            while time.monotonic() < paused:
                assert store.sweep() == 0
                time.sleep(0.2)
            assert store.match(match)["status"] == "running"  # type: ignore[index]
            assert page(store, match) is None
        finally:
            os.kill(process.pid, signal.SIGCONT)
        while store.match(match)["status"] == "running":  # type: ignore[index]
            time.sleep(0.1)
            assert time.monotonic() < deadline + WAIT
        settled = store.match(match)
        assert settled is not None and settled["status"] == "finished" and settled["report"]
    finally:
        with contextlib.suppress(Exception):
            os.kill(process.pid, signal.SIGCONT)
        process.kill()
        process.wait(WAIT)
        store.close()


def test_the_servers_liveness_loop_sweeps_round_after_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """``scheduler.keep_alive`` goes on beating at the default period: a loop that died after its first round (as it
    did when the period's constant moved and the loop still read it from its old home) leaves a live server judged
    gone by its peers after the grace period."""
    import asyncio

    from train.arena import liveness, scheduler

    class CountingStore:
        server_id = "counting"
        rounds = 0

        def keep_alive(self) -> int:
            self.rounds += 1
            return 0

    monkeypatch.setattr(liveness, "LIVENESS_SECONDS", 0.01)
    store = CountingStore()

    async def run_a_while() -> None:
        task = asyncio.create_task(scheduler.keep_alive(store))  # type: ignore[arg-type]
        await asyncio.sleep(0.3)
        assert not task.done(), task.exception() if task.done() else None
        task.cancel()

    asyncio.run(run_a_while())
    assert store.rounds >= 3
