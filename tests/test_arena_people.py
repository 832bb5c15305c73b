"""People at the table (``train.arena.people``), without a browser: the admission rule, a person's match over the
protocol, and that its results stay out of the bots' ladder and show on the people's page, escaped."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.arena_helpers import WAIT, Recorder, Server, raw, served, start
from train.arena import people
from train.arena.client import play


@pytest.fixture(scope="module", name="server")
def people_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from served(tmp_path_factory, people=True)


def _post(server: Server, body: Any, **headers: str) -> tuple[int, dict[str, Any]]:
    return server.post("/api/people/seats", body, headers)


def _get(server: Server, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=WAIT) as answer:
        return str(answer.read().decode())


def test_people_are_admitted_only_with_people_on(server: Server) -> None:
    server.arena.people.enabled = False
    try:
        status, answer = _post(server, {"name": "carol", "opponents": ["heuristic"], "deals": 1})
        assert status == 403 and "--people" in answer["error"]
    finally:
        server.arena.people.enabled = True
    assert json.loads(_get(server, "/api/people/options"))["enabled"] is True


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"name": "ca rol", "opponents": ["heuristic"]}, 400, "name"),
        ({"name": "x" * 33, "opponents": ["heuristic"]}, 400, "name"),
        ({"name": "carol", "opponents": []}, 400, "opponents"),
        ({"name": "carol", "opponents": ["heuristic"] * 8}, 400, "opponents"),
        ({"name": "carol", "opponents": ["heuristic"], "deals": 0}, 400, "deals"),
        ({"name": "carol", "opponents": ["heuristic"], "deals": 11}, 400, "deals"),
        ({"name": "carol", "opponents": ["heuristic"], "seat": 0}, 400, "expected"),
        ({"name": "carol", "opponents": ["bot:nobody"]}, 409, "not connected"),
        ({"name": "carol", "opponents": ["ppo:/etc/passwd"]}, 400, ""),
        ({"name": "carol", "opponents": ["file.py:Bot"]}, 400, ""),
    ],
)
def test_the_admission_rule_refuses(server: Server, body: dict[str, Any], status: int, says: str) -> None:
    got, answer = _post(server, body)
    assert got == status and says in answer["error"], answer


def test_a_bots_name_a_seated_name_and_a_foreign_page_are_refused(server: Server, monkeypatch: Any) -> None:
    name, _ = server.new_bot()
    got, answer = _post(server, {"name": name, "opponents": ["heuristic"]})
    assert got == 409 and "bot's name" in answer["error"]
    got, answer = _post(server, {"name": "dave", "opponents": ["heuristic"]}, Origin="http://evil.example")
    assert got == 403
    got, answer = _post(server, {"name": "dave", "opponents": ["heuristic"]}, **{"Content-Type": "text/plain"})
    assert got == 415
    got, first = _post(server, {"name": "dave", "opponents": ["heuristic"]})
    assert got == 200 and len(first["token"]) >= 40
    got, answer = _post(server, {"name": "dave", "opponents": ["heuristic"]})
    assert got == 409 and "seated already" in answer["error"]
    monkeypatch.setattr(people, "MAX_PEOPLE", len(server.arena.people.seats))
    got, answer = _post(server, {"name": "erin", "opponents": ["heuristic"]})
    assert got == 429
    server.arena.people.seats.pop("dave")


def test_an_expired_or_wrong_seat_token_is_refused(server: Server, monkeypatch: Any) -> None:
    monkeypatch.setattr(people, "SEAT_SECONDS", -1.0)
    got, seat = _post(server, {"name": "frank", "opponents": ["heuristic"]})
    assert got == 200
    for token in (seat["token"], "not-the-token"):
        ws = raw(server, {"type": "hello", "protocol": 1, "name": "frank", "token": token})
        reply = json.loads(ws.recv(timeout=WAIT))
        assert reply["type"] == "error" and reply["fatal"] and "wrong token" in reply["message"]
        ws.close()
    server.arena.people.seats.pop("frank")


def test_a_persons_match_is_played_stored_and_kept_off_the_ladder(server: Server) -> None:
    bot, token = server.new_bot()
    thread = start(Recorder(), server, bot, token)
    got, seat = _post(server, {"name": "grace", "opponents": [f"bot:{bot}", "random"], "deals": 1})
    assert got == 200 and seat["seats"] == ["person:grace", f"bot:{bot}", "random"]

    class Person(Recorder):
        words = True

    person = Person()
    done = threading.Thread(
        target=play,
        args=(person, server.url, "grace", seat["token"]),
        kwargs={"reconnect": False, "until": lambda m: m["type"] == "match_end"},
        daemon=True,
    )
    done.start()
    done.join(WAIT)
    thread.join(WAIT)
    assert not done.is_alive() and not thread.is_alive()
    turns = [m for m in person.messages if m.get("type", "turn") == "turn" and "legal" in m]
    assert turns and all("label" in a for t in turns for a in t["legal"]) and all(t["text"] for t in turns)
    end = [m for m in person.messages if m.get("type") == "match_end"][0]
    assert end["status"] == "finished" and end["results"][0]["seat"] == "bot:person:grace"
    assert "person:grace" not in server.arena.registry.connected()  # never in the ladder's registry

    deadline = time.monotonic() + WAIT
    while "grace" in server.arena.people.seats:  # forgotten once the match is stored
        assert time.monotonic() < deadline
        time.sleep(0.02)
    found = people.people_matches(server.store)
    assert [m["person"] for m in found] == ["grace"]
    assert found[0]["status"] == "finished" and found[0]["deals"] == 1 and found[0]["chips"] is not None
    stored = server.store.match(found[0]["match"])
    assert stored is not None and stored["status"] == "people-finished" and stored["games"] == 1  # a deal once
    assert json.loads(stored["request"])["people"] == ["grace"]

    standings = server.arena.book.standings()
    assert standings.matches == 0 and standings.bot(bot) is None and standings.bot("person:grace") is None
    board = json.loads(_get(server, "/api/leaderboard"))
    assert "grace" not in json.dumps(board)
    assert json.loads(_get(server, f"/api/leaderboard/{bot}"))["matches"] == []  # not on the bot's page either
    page = _get(server, "/people")
    assert "grace" in page and f"bot:{bot}" in page
    assert json.loads(_get(server, "/api/people"))["matches"][0]["person"] == "grace"

    ws = raw(server, {"type": "hello", "protocol": 1, "name": "grace", "token": seat["token"]})
    assert "wrong token" in json.loads(ws.recv(timeout=WAIT))["message"]  # forgotten after the match
    ws.close()


def test_the_people_page_escapes_every_name() -> None:
    found = [{"match": "0123456789abcdef", "created": 0.0, "status": "finished", "person": "<b>x</b>",
              "seats": ["bot:person:<b>x</b>", "bot:<script>alert(1)</script>", "heuristic"], "deals": 1,
              "chips": 1.0, "advantage": 0.5}]  # fmt: skip
    page = people.people_page(found)
    assert "<script>" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;" in page and "&lt;b&gt;x&lt;/b&gt;" in page


def test_the_play_page_and_the_tables_files_are_served(server: Server) -> None:
    page = _get(server, "/play")
    assert "/arena-static/people.js" in page and "/static/table.js" in page
    assert "renderBoard" in _get(server, "/static/table.js")
    assert "stopImmediatePropagation" in _get(server, "/arena-static/people.js")
