"""The arena's pages under load and faults: a big match's hand histories are paged and built off the event loop's
thread, heavy answers are bounded per client and in all, a database that fails answers 503 in one line logged once,
and every path parameter is checked (404, never 500)."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the serve extra: pip install -e '.[serve]'")
pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")
pytest.importorskip("alembic", reason="the arena extra: pip install -e '.[arena]'")

import sqlalchemy as sa  # noqa: E402
import uvicorn  # noqa: E402
from starlette.applications import Starlette  # noqa: E402

from train.arena import histories, leaderboard  # noqa: E402
from train.arena.records import Book  # noqa: E402
from train.arena.storage import Store, games, matches  # noqa: E402

WAIT = 120.0
BIG = 8000  # games of the big match: the most a match may have
SMALL = 6


def _history(deal: int, rotation: int) -> dict[str, Any]:
    """About 1.5 KB of nested JSON, as a stored hand history is."""
    return {
        "deal": deal,
        "rotation": rotation,
        "events": [{"seat": i % 5, "card": (deal + i) % 52, "turn": i} for i in range(40)],
    }


def _store_match(store: Store, match: str, count: int, status: str = "finished") -> None:
    players = 4
    request = {
        "seats": ["bot:alice", "heuristic", "heuristic", "heuristic"],
        "players": players,
        "deals": count,
        "seed": 7,
        "clock": 1.0,
        "grace": 1.0,
        "fallback": "heuristic",
    }
    with store.engine.begin() as db:
        db.execute(
            sa.insert(matches),
            {"id": match, "created": time.time(), "request": json.dumps(request), "status": status, "report": None},
        )
        outcomes = json.dumps([[0] * 6] * players)
        rows = [
            {
                "match_id": match,
                "deal": g // players,
                "rotation": g % players,
                "outcomes": outcomes,
                "history": json.dumps(_history(g // players, g % players), separators=(",", ":")),
            }
            for g in range(count)
        ]
        db.execute(sa.insert(games), rows)


class Served:
    def __init__(self, folder: Path) -> None:
        self.store = Store(folder)
        self.book = Book(self.store, ["heuristic"], [4])
        self.loop_thread: int | None = None  # the event loop's

        @contextlib.asynccontextmanager
        async def span(_app: Any) -> AsyncIterator[None]:
            self.loop_thread = threading.get_ident()
            yield

        app = Starlette(routes=leaderboard.routes(self.book, self.store), lifespan=span)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        threading.Thread(target=self.server.run, daemon=True).start()
        deadline = time.monotonic() + WAIT
        while not self.server.started:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]

    def get(self, path: str) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=WAIT) as answer:
                body = answer.read()
                status = answer.status
        except urllib.error.HTTPError as err:
            body, status = err.read(), err.code
        try:
            return status, json.loads(body)
        except ValueError:
            return status, body.decode()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    s = Served(tmp_path_factory.mktemp("pages"))
    _store_match(s.store, "big0000000000000", BIG)
    _store_match(s.store, "small00000000000", SMALL)
    _store_match(s.store, "running000000000", SMALL, status="running")
    yield s
    s.server.should_exit = True
    s.store.close()


def test_a_small_match_answers_whole_as_before(served: Served) -> None:
    status, body = served.get("/api/matches/small00000000000/histories")
    assert status == 200
    assert body["match"] == "small00000000000" and body["seats"][0] == "bot:alice" and body["seed"] == 7
    assert [(g["deal"], g["rotation"]) for g in body["games"]] == [(g // 4, g % 4) for g in range(SMALL)]
    assert body["games"][5]["history"] == _history(1, 1)
    assert body["all_field"] == [] and body["total"] == SMALL and body["next"] is None
    assert served.get("/api/matches/running000000000/histories")[0] == 404


def test_a_big_match_is_paged_and_every_game_is_served_once(served: Served) -> None:
    status, first = served.get("/api/matches/big0000000000000/histories")
    assert status == 200 and len(first["games"]) == histories.MAX_PAGE_GAMES and first["total"] == BIG
    seen = [(g["deal"], g["rotation"]) for g in first["games"]]
    following = first["next"]
    while following is not None:
        status, body = served.get(following)
        assert status == 200
        seen += [(g["deal"], g["rotation"]) for g in body["games"]]
        following = body["next"]
    assert seen == [(g // 4, g % 4) for g in range(BIG)]
    status, body = served.get("/api/matches/big0000000000000/histories?offset=7998&limit=5")
    assert status == 200 and [g["deal"] for g in body["games"]] == [1999, 1999] and body["next"] is None
    status, body = served.get("/api/matches/big0000000000000/histories?offset=1000000000")  # the largest offset
    assert status == 200 and body["games"] == [] and body["next"] is None


@pytest.mark.parametrize(
    "query", ["limit=0", "limit=501", "offset=-1", "offset=x", "limit=1e3", "offset=" + "9" * 30, "offset=1000000001"]
)
def test_a_page_out_of_range_is_refused_in_one_line(served: Served, query: str) -> None:
    status, body = served.get(f"/api/matches/big0000000000000/histories?{query}")
    assert status == 400 and "expected a whole number" in body["error"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/matches/x/games/9223372036854775808/0",
        "/api/matches/big0000000000000/games/0/9223372036854775808",
        "/api/matches/big0000000000000/games/" + "9" * 5000 + "/0",
        "/api/matches/big0000000000000/games/-1/0",
        "/api/matches/big0000000000000/games/%D9%A3/0",
        "/api/matches/" + "a" * 70 + "/histories",
        "/api/matches/%00/histories",
        "/api/matches/small00000000000/games/99/0",
        "/bots/" + "a" * 300,
        "/api/leaderboard/%00",
    ],
)
def test_every_path_parameter_is_checked(served: Served, path: str) -> None:
    status, body = served.get(path)
    assert status == 404 and isinstance(body, dict) and "no such" in body["error"]


def test_concurrent_history_requests_are_built_off_the_event_loop(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which thread builds each page, not how long the loop waited: a wall-clock bound failed on a loaded CI machine
    (the loop's thread waits for the interpreter lock with the clients' threads of this same process), and what it
    was there for is that no page is read or encoded on the loop's own thread."""
    served.get("/api/matches/big0000000000000/histories")  # warm the database's cache
    built_on: list[tuple[int, str]] = []
    build = leaderboard.page

    def recorded_page(*args: Any) -> Any:
        built_on.append((threading.get_ident(), threading.current_thread().name))
        return build(*args)

    monkeypatch.setattr(leaderboard, "page", recorded_page)
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda _: served.get("/api/matches/big0000000000000/histories"), range(32)))
    statuses = sorted({status for status, _ in answers})
    assert 200 in statuses and set(statuses) <= {200, 429, 503}, statuses
    for status, body in answers:
        if status != 200:
            assert "the limit for one client" in body["error"] or "its limit" in body["error"]
    assert len(built_on) == sum(status == 200 for status, _ in answers)
    assert served.loop_thread is not None
    assert all(ident != served.loop_thread and name.startswith("arena-pages") for ident, name in built_on)


def test_pages_are_built_on_threads_of_their_own_a_few_at_a_time_per_client(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not in the default pool, where the tables' built-in agents think: a client flooding the pages would hold back
    their moves. Past ``MAX_PAGES_PER_CLIENT`` pages in flight a client is refused at once, in one line."""
    release = threading.Event()
    threads: list[str] = []

    def slow_bot_matches(store: Any, name: str) -> list[Any]:
        threads.append(threading.current_thread().name)
        assert release.wait(WAIT)
        return []

    monkeypatch.setattr(leaderboard, "bot_matches", slow_bot_matches)
    asked = leaderboard.MAX_PAGES_PER_CLIENT + 2
    with ThreadPoolExecutor(asked) as pool:
        pending = [pool.submit(served.get, "/bots/alice") for _ in range(asked)]
        try:
            deadline = time.monotonic() + WAIT
            while sum(f.done() for f in pending) < 2:  # the two past the limit are answered while the others wait
                assert time.monotonic() < deadline, "no request was refused while the client's pages were in flight"
                time.sleep(0.01)
        finally:
            release.set()
        answers = [f.result() for f in pending]
    statuses = sorted(status for status, _ in answers)
    assert statuses == [200] * leaderboard.MAX_PAGES_PER_CLIENT + [429, 429], statuses
    refused = [body for status, body in answers if status == 429]
    assert all("the limit for one client" in body["error"] for body in refused)
    assert threads and all(name.startswith("arena-pages") for name in threads), threads


def test_a_database_that_fails_answers_503_in_one_line_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    s = Served(tmp_path)
    try:
        _store_match(s.store, "small00000000000", SMALL)
        assert s.get("/leaderboard")[0] == 200

        def refuse(*_args: Any) -> None:
            import sqlite3

            raise sqlite3.OperationalError("unable to open database file")

        caplog.set_level(logging.WARNING, logger="bourre.arena")
        s.store.engine.dispose()  # no pooled connection: every read connects, and fails
        sa.event.listen(s.store.engine, "do_connect", refuse)
        paths = [
            "/leaderboard",
            "/api/leaderboard",
            "/bots/alice",
            "/api/matches/small00000000000/histories",
            "/api/matches/small00000000000/games/0/0",
        ]
        for _ in range(3):
            for path in paths:
                status, body = s.get(path)
                assert status == 503 and "the database is out of reach" in body["error"], (path, body)
                assert "\n" not in body["error"]
        lines = [r for r in caplog.records if r.name == "bourre.arena"]
        assert len(lines) == 1 and lines[0].exc_info is None and "503" in lines[0].getMessage()
        sa.event.remove(s.store.engine, "do_connect", refuse)
        assert s.get("/leaderboard")[0] == 200  # back by itself
        assert len([r for r in caplog.records if r.name == "bourre.arena"]) == 2
    finally:
        s.server.should_exit = True
        s.store.close()
