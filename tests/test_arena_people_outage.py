"""During a database outage the people's routes answer 503 in one line, logged once, as the leaderboard's pages do
(they once answered a plain 500, with a traceback in the log for each request)."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from arena_helpers import WAIT, Server, served

sa = pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")


@pytest.fixture(name="server")
def people_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from served(tmp_path_factory, people=True)


def _get(server: Server, path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=WAIT) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_the_people_routes_answer_503_in_one_line_while_the_database_is_out(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    assert _get(server, "/api/people")[0] == 200

    def refuse(*_args: Any) -> None:
        import sqlite3

        raise sqlite3.OperationalError("unable to open database file")

    caplog.set_level(logging.WARNING, logger="bourre.arena")
    server.store.engine.dispose()  # no pooled connection: every read connects, and fails
    sa.event.listen(server.store.engine, "do_connect", refuse)
    try:
        for _ in range(2):
            for path in ("/api/people", "/people"):
                status, body = _get(server, path)
                assert status == 503 and "the database is out of reach" in body["error"], (path, body)
            status, body = server.post("/api/people/seats", {"name": "carol", "opponents": ["heuristic"]}, {})
            assert status in (200, 503), body  # a seat is given without the database, or refused in one line
            assert "internal" not in json.dumps(body)
        lines = [r for r in caplog.records if r.name == "bourre.arena" and "503" in r.getMessage()]
        assert len(lines) == 1 and lines[0].exc_info is None
        assert not [r for r in caplog.records if r.exc_info is not None]
    finally:
        sa.event.remove(server.store.engine, "do_connect", refuse)
    assert _get(server, "/api/people")[0] == 200  # back by itself
