"""The arena on PostgreSQL, against a server named by ``BOURRE_TEST_POSTGRES`` (tests/postgres_helpers.py; without one
these tests skip and say why, and ``.ci/run`` starts one): the migrations up and down from an empty database, a match
stored and read back as SQLite keeps it, a server killed with SIGKILL mid-match that keeps every finished game, the
claim of pending matches by two processes at once (these three on SQLite too), and an arena that waits for its
database through a restart and loses nothing. A database URL's password is never shown (these run without a
server)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_helpers import WAIT, Recorder, ask_for_match, free_port, serve_process
from postgres_helpers import PrivateServer, postgres_database, private_postgres_server  # noqa: F401 (fixtures)
from sqlalchemy import create_engine, inspect, select

from train.arena.client import play
from train.arena.in_thread import serve_in_thread
from train.arena.match import MatchSpec
from train.arena.server import Arena
from train.arena.storage import PENDING, Store, alembic_config, database_url, masked, matches, metadata, migrate

SECRET = "hunter2-not-shown"


@pytest.fixture(params=["sqlite", "postgresql"], name="database")
def either_database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of an empty database: a SQLite file, and a PostgreSQL database (which skips without a server)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'arena.sqlite3'}"
    return str(request.getfixturevalue("postgres"))


def _match_ids(store: Store) -> list[str]:
    with store.engine.connect() as db:
        return [str(r[0]) for r in db.execute(select(matches.c.id).order_by(matches.c.created))]


# ---------------------------------------------------------------------------- the schema
def test_the_migrations_run_up_and_down_from_an_empty_database(database: str) -> None:
    from alembic import command
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from alembic.script import ScriptDirectory

    engine = create_engine(database_url(database))
    revisions = [s.revision for s in reversed(list(ScriptDirectory.from_config(alembic_config()).walk_revisions()))]
    assert revisions[:4] == ["0001", "0002", "0003", "0004"]
    for revision in revisions:  # one at a time, as a server of each version would have left the database
        migrate(engine, revision)
        with engine.connect() as db:
            assert MigrationContext.configure(db).get_current_revision() == revision
    with engine.connect() as db:  # the migrated schema is the tables' (types, keys, indexes), on this database
        ours = {"include_name": lambda name, kind, _parent: kind != "table" or name in metadata.tables}
        assert compare_metadata(MigrationContext.configure(db, opts=ours), metadata) == []
    with engine.begin() as db:
        command.downgrade(alembic_config(db), "base")
    with engine.connect() as db:
        assert set(inspect(db).get_table_names()) <= {"alembic_version"}
    engine.dispose()
    store = Store(url=database)  # and up again, as a server migrates at its start
    store.add_bot("again")
    assert store.check_token("again", "wrong") is False
    store.close()


def test_a_match_is_stored_and_read_back_as_on_sqlite(postgres: str, tmp_path: Path) -> None:
    spec = MatchSpec.from_request({"seats": ["heuristic", "random", "heuristic"], "deals": 3, "seed": 5})
    kept = []
    for url in (f"sqlite:///{tmp_path / 'arena.sqlite3'}", postgres):
        store = Store(url=url)
        result = asyncio.run(Arena(store).play(spec))
        assert result["report"]["status"] == "finished"
        (match,) = _match_ids(store)
        row = store.match(match)
        assert row is not None and row["status"] == "finished" and row["games"] == 3 * 3
        assert json.loads(row["report"]) == json.loads(json.dumps(result["report"]))
        games = store.games(match)
        assert [(g["deal"], g["rotation"]) for g in games] == [(k // 3, k % 3) for k in range(9)]
        kept.append([{k: v for k, v in g.items() if k != "match_id"} for g in games])
        store.close()
    assert kept[0] == kept[1]  # every outcome and hand history, the same on both


# ---------------------------------------------------------------------------- a server killed mid-match
def test_sigkill_mid_match_loses_no_finished_game(database: str, tmp_path: Path) -> None:
    store = Store(url=database)
    token, operator = store.add_bot("slow"), store.add_operator("tests")
    port = free_port()
    process = serve_process(tmp_path, port, database=database)
    try:
        bot = Recorder(choose=lambda turn: (time.sleep(0.02), turn["legal"][0]["action"])[1])
        url = f"ws://127.0.0.1:{port}/bot"

        def bot_plays() -> None:
            with contextlib.suppress(ConnectionError):  # the server is killed under it
                play(bot, url, "slow", token, reconnect=False)

        threading.Thread(target=bot_plays, daemon=True).start()
        body = {"seats": ["heuristic", "bot:slow", "random"], "deals": 200}
        deadline = time.monotonic() + WAIT
        while not bot.messages:  # not connected yet: ask again until the bot sits
            threading.Thread(target=ask_for_match, args=(port, operator, body, {}), daemon=True).start()
            time.sleep(0.5)
            assert time.monotonic() < deadline
        while len([m for m in bot.messages if m["type"] == "deal_end"]) < 4:
            time.sleep(0.05)
            assert time.monotonic() < deadline
        os.kill(process.pid, signal.SIGKILL)
        process.wait(WAIT)
        told = len([m for m in bot.messages if m["type"] == "deal_end"])
    finally:
        if process.poll() is None:
            process.kill()
    match = bot.messages[0]["match"]
    stored = store.match(match)
    assert stored is not None and stored["status"] == "running"
    assert stored["games"] >= told >= 4  # committed before its deal_end was sent
    games = store.games(match)
    assert [(g["deal"], g["rotation"]) for g in games] == [(k, k % 3) for k in range(len(games))]  # a deal once
    assert all(g["history"]["deals"][0]["results"]["payments"] for g in games)
    again = serve_process(tmp_path, free_port(), database=database)
    again.kill()
    again.wait(WAIT)
    assert store.match(match)["status"] == "interrupted"  # type: ignore[index]
    store.close()


# ---------------------------------------------------------------------------- claims, for several servers
CLAIMER = """
import sys
from train.arena.storage import Store
store = Store(url=sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
while (row := store.claim_match(sys.argv[2])) is not None:
    print(row["id"], flush=True)
store.close()
"""


def test_two_processes_claim_every_pending_match_exactly_once(database: str) -> None:
    store = Store(url=database)
    queued = [f"m{k:03d}" for k in range(60)]
    for match in queued:
        store.queue_match(match, {"seats": ["heuristic", "random", "random"], "deals": 1})
    store.start_match("elsewhere", {"seats": []}).result()  # running already: never claimed
    assert store.match(queued[-1])["status"] == PENDING  # type: ignore[index]
    claimers = {
        server: subprocess.Popen(
            [sys.executable, "-c", CLAIMER, database, server],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for server in ("server-a", "server-b")
    }
    try:
        for process in claimers.values():
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        for process in claimers.values():  # both start claiming at once
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        claimed = {}
        for server, process in claimers.items():
            out, _ = process.communicate(timeout=WAIT)
            assert process.returncode == 0
            claimed[server] = out.split()
    finally:
        for process in claimers.values():
            if process.poll() is None:
                process.kill()
    every = claimed["server-a"] + claimed["server-b"]
    assert sorted(every) == queued  # every one claimed, none twice
    for server, ids in claimed.items():
        assert ids == sorted(ids)  # each server took the oldest pending one each time
        for match in ids:
            row = store.match(match)
            assert row is not None and row["status"] == "running" and row["server"] == server
    assert store.claim_match("server-c") is None
    assert store.match("elsewhere")["server"] == store.server_id  # type: ignore[index]  # started here, not claimed
    store.close()


# ---------------------------------------------------------------------------- the database restarted
class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(name="logged")
def logged_records() -> Iterator[list[logging.LogRecord]]:
    """Every record of the arena's logger and of uvicorn's (which does not propagate to the root)."""
    handler = _Records()
    loggers = [logging.getLogger(name) for name in ("bourre.arena", "uvicorn", "uvicorn.error")]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler.records
    for logger in loggers:
        logger.removeHandler(handler)


def test_an_arena_waits_for_its_database_through_a_restart(
    private_postgres: PrivateServer, logged: list[logging.LogRecord]
) -> None:
    """The database server stops under a match and starts again (a server of this test's own): the table waits for
    its game's commit, the writer tries again until the server is back (one warning each way, no traceback, the
    password masked), and the match ends with every game stored once."""
    ctl = private_postgres.ctl
    url = database_url(private_postgres.url)
    secret = url.password or SECRET  # a server that trusts the loopback ignores a password: one is given to mask
    store = Store(url=url.set(password=secret).render_as_string(hide_password=False))
    token, operator = store.add_bot("steady"), store.add_operator("tests")
    arena = Arena(store)
    uvicorn_server, port = serve_in_thread(arena)
    try:
        bot = Recorder(choose=lambda turn: (time.sleep(0.005), turn["legal"][0]["action"])[1])
        until = {"reconnect": False, "until": lambda m: m["type"] == "match_end"}
        url_ws = f"ws://127.0.0.1:{port}/bot"
        threading.Thread(target=play, args=(bot, url_ws, "steady", token), kwargs=until, daemon=True).start()
        deadline = time.monotonic() + WAIT
        while "steady" not in arena.registry.connected():
            time.sleep(0.02)
            assert time.monotonic() < deadline
        answer: dict[str, Any] = {}
        body = {"seats": ["heuristic", "bot:steady", "random"], "deals": 36, "clock": 10}
        asker = threading.Thread(target=ask_for_match, args=(port, operator, body, answer), daemon=True)
        asker.start()
        while len([m for m in bot.messages if m["type"] == "deal_end"]) < 3:
            time.sleep(0.02)
            assert time.monotonic() < deadline
        ctl("stop -m fast -w")
        try:
            while not any("out of reach" in r.getMessage() for r in logged):  # the next game's commit meets it
                time.sleep(0.05)
                assert time.monotonic() < deadline, "no game met the stopped database"
            time.sleep(1.5)  # the writer keeps trying while the database is down
        finally:
            ctl("start -w")
        asker.join(WAIT)
        assert answer.get("status") == 200, answer
        assert answer["body"]["report"]["status"] == "finished"
    finally:
        uvicorn_server.stop()
    match = bot.messages[0]["match"]
    row = store.match(match)
    assert row is not None and row["status"] == "finished" and row["games"] == 36
    games = store.games(match)
    assert [(g["deal"], g["rotation"]) for g in games] == [(k, k % 3) for k in range(36)]
    store.close()
    said = [r.getMessage() for r in logged]
    assert any("is back after" in m for m in said), said
    assert not [r for r in logged if r.exc_info or r.levelno >= logging.ERROR], said
    assert all(secret not in m for m in said) and any("***" in m for m in said)


# ---------------------------------------------------------------------------- the password, never shown
def test_a_database_url_is_shown_without_its_password(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("psycopg", reason="psycopg 3, in the arena extra: pip install -e '.[arena]'")
    from train.cli import main

    assert masked(f"postgresql://bob:{SECRET}@db.example:5432/arena") == "postgresql://bob:***@db.example:5432/arena"
    assert SECRET not in masked(f"postgresql://bob@db/arena?password={SECRET}")
    assert database_url("postgres://bob@db/arena").drivername == "postgresql+psycopg"
    with pytest.raises(ValueError, match=r"bob:\*\*\*@db") as refused:
        database_url(f"mysql://bob:{SECRET}@db/arena")
    assert SECRET not in str(refused.value)
    closed = free_port()  # nothing listens there: the connection is refused at once
    for command in (["arena", "add-bot", "alice"], ["arena", "add-operator", "me"]):
        status = main(
            [*command, "--data", str(tmp_path), "--database", f"postgresql://bob:{SECRET}@127.0.0.1:{closed}/a"]
        )
        out, err = capsys.readouterr()
        assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert SECRET not in err and f"postgresql+psycopg://bob:***@127.0.0.1:{closed}/a" in err
