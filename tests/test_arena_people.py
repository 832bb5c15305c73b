"""People at the table (``train.arena.people``), without a browser: the admission rule, a person's match over the
protocol, and that its results stay out of the bots' ladder and show on the people's page, escaped."""

from __future__ import annotations

import hashlib
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.arena_helpers import WAIT, Recorder, Server, hello, raw, served, start
from train.arena import people
from train.arena.client import play


@pytest.fixture(scope="module", name="server")
def people_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from served(tmp_path_factory, people=True)


@pytest.fixture(autouse=True)
def _fresh_allowance(server: Server) -> None:
    """Every test's requests from 127.0.0.1 start with the full allowance of seat requests."""
    requests = getattr(server.arena.people, "requests", None)  # None before the allowance existed
    if requests is not None:
        requests.clear()


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
        ({"name": "carol", "opponents": ["offered:\ud800"]}, 400, "lone UTF-16 surrogate"),  # a 500 once
        ({"name": "carol", "opponents": ["bot:\ud800"]}, 400, "lone UTF-16 surrogate"),
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
    got, first = _post(server, {"name": "dave", "opponents": ["heuristic"]}, **_from("10.0.0.1"))
    assert got == 200 and len(first["token"]) >= 40
    got, answer = _post(server, {"name": "dave", "opponents": ["heuristic"]}, **_from("10.0.0.2"))
    assert got == 409 and "seated already" in answer["error"]
    server.arena.people.seats.pop("dave")


def test_a_ladder_servers_bots_are_not_seated_at_peoples_tables(server: Server, monkeypatch: Any) -> None:
    """A visitor needs no token: on a server that runs the ladder, a person's table seats built-in agents only, so that
    no one can hold the ladder's bots out of it (a red-team bot did, and steered whom its own bot met)."""
    bot, token = server.new_bot()
    ws = raw(server, hello(bot, token))
    try:
        server.wait_connected(bot)
        assert f"bot:{bot}" in json.loads(_get(server, "/api/people/options"))["bots"]
        monkeypatch.setattr(server.arena, "ladder", object())  # as ``--ladder`` sets it
        got, answer = _post(server, {"name": "erin", "opponents": [f"bot:{bot}", "heuristic"]}, **_from("10.0.0.7"))
        assert got == 409 and "runs the ladder" in answer["error"], answer
        assert json.loads(_get(server, "/api/people/options"))["bots"] == []
        got, answer = _post(server, {"name": "erin", "opponents": ["heuristic"]}, **_from("10.0.0.7"))
        assert got == 200, answer  # built-in agents still
        server.arena.people.seats.pop("erin")
    finally:
        ws.close()


def _from(address: str) -> dict[str, str]:
    """Headers of a request from ``address``: uvicorn takes a client's address from ``X-Forwarded-For`` when the
    connection comes from 127.0.0.1 (its ``forwarded_allow_ips``), as behind a proxy on this machine."""
    return {"X-Forwarded-For": address}


def test_the_options_are_refused_without_people_and_show_no_spec_of_the_operator(
    server: Server, monkeypatch: Any
) -> None:
    offered = "llm:model=m,base_url=http://secret.example/v1,key_env=SECRET_KEY"
    monkeypatch.setattr(server.arena, "offered", (offered, "ppo"))
    server.arena.people.enabled = False
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            _get(server, "/api/people/options")
        assert refused.value.code == 403 and "--people" in json.loads(refused.value.read())["error"]
    finally:
        server.arena.people.enabled = True
    bot, token = server.new_bot()
    ws = raw(server, hello(bot, token))  # connected: the page may suggest it
    server.wait_connected(bot)
    text = _get(server, "/api/people/options")
    options = json.loads(text)
    assert "secret" not in text.lower() and "base_url" not in text and "key_env" not in text
    assert "offered:1" in options["agents"] and options["offered"] == {"offered:1": "llm", "ppo": "ppo"}
    assert f"bot:{bot}" in options["bots"] and options["max_games"] == people.MAX_GAMES

    got, seat = _post(server, {"name": "olga", "opponents": ["offered:1", "random"]}, **_from("10.0.0.9"))
    assert got == 200 and seat["seats"] == ["person:olga", "offered:1", "random"] and "secret" not in json.dumps(seat)
    assert server.arena.people.seats.pop("olga").opponents == (offered, "random")  # the match seats the full spec
    got, answer = _post(server, {"name": "olga", "opponents": ["offered:3"]}, **_from("10.0.0.9"))
    assert got == 400 and "offered:3" in answer["error"]
    found = [{"request": {"seats": ["bot:person:olga", offered], "people": ["olga"]}}]
    assert "secret" not in json.dumps(_shown_seats(server, found))
    ws.close()


def _shown_seats(server: Server, found: list[dict[str, Any]]) -> list[list[str]]:
    return [[people._shown(s, server.arena.offered) for s in m["request"]["seats"]] for m in found]


def test_one_visitor_holds_one_waiting_seat_and_asks_a_few_times(server: Server) -> None:
    first = _post(server, {"name": "vic1", "opponents": ["heuristic"]}, **_from("10.1.0.1"))[1]
    got, second = _post(server, {"name": "vic2", "opponents": ["heuristic"]}, **_from("10.1.0.1"))
    assert got == 200 and "vic1" not in server.arena.people.seats  # replaced: one waiting seat a visitor
    ws = raw(server, {"type": "hello", "protocol": 1, "name": "vic1", "token": first["token"]})
    assert "wrong token" in json.loads(ws.recv(timeout=WAIT))["message"]
    ws.close()
    for _ in range(people.REQUEST_BURST - 2):
        assert _post(server, {"name": "vic3", "opponents": ["heuristic"]}, **_from("10.1.0.1"))[0] == 200
    got, answer = _post(server, {"name": "vic4", "opponents": ["heuristic"]}, **_from("10.1.0.1"))
    assert got == 429 and "try again in" in answer["error"]
    # another /64 is another visitor; the same /64 is the same one
    assert _post(server, {"name": "vic5", "opponents": ["heuristic"]}, **_from("2001:db8:0:1::1"))[0] == 200
    assert _post(server, {"name": "vic6", "opponents": ["heuristic"]}, **_from("2001:db8:0:1::2"))[0] == 200
    assert "vic5" not in server.arena.people.seats and {"vic3", "vic6"} <= set(server.arena.people.seats)
    for name in ("vic3", "vic6"):
        server.arena.people.seats.pop(name)


def test_a_visitor_is_its_address_an_ipv6_one_by_its_64() -> None:
    assert people.visitor("192.0.2.7") == "192.0.2.7"
    assert people.visitor("::ffff:192.0.2.7") == "192.0.2.7"
    assert people.visitor("2001:db8:1:2:aaaa::1") == people.visitor("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert people.visitor(None) == "?" and people.visitor("x" * 100) == "x" * 64


def test_waiting_seats_are_bounded_and_expire_fast(server: Server, monkeypatch: Any) -> None:
    assert people.SEAT_SECONDS <= 30  # a flood of seats never claimed locks the others out for seconds, not minutes
    monkeypatch.setattr(people.bounds, "MAX_PENDING", 2)
    for k in (1, 2):
        assert _post(server, {"name": f"wait{k}", "opponents": ["heuristic"]}, **_from(f"10.2.0.{k}"))[0] == 200
    got, answer = _post(server, {"name": "wait3", "opponents": ["heuristic"]}, **_from("10.2.0.3"))
    assert got == 429 and "wait" in answer["error"]
    server.arena.people.seats["wait1"].expires = 0.0  # SEAT_SECONDS later
    assert _post(server, {"name": "wait3", "opponents": ["heuristic"]}, **_from("10.2.0.3"))[0] == 200
    for name in ("wait2", "wait3"):
        server.arena.people.seats.pop(name)


def test_a_persons_games_are_bounded() -> None:
    assert people.MAX_GAMES < people.MAX_DEALS * (1 + people.MAX_OPPONENTS)


@pytest.mark.parametrize("deals", [4, 10])  # at 8 players: 32 and 80 games
def test_deals_times_players_past_the_bound_is_refused(server: Server, deals: int) -> None:
    got, answer = _post(server, {"name": "gus", "opponents": ["random"] * 7, "deals": deals})
    assert got == 400 and "games" in answer["error"], answer


@pytest.mark.parametrize(
    ("bound", "says"),
    [({"IDLE_MOVES": 2}, "ran out of time"), ({"MATCH_SECONDS": 0.0, "IDLE_MOVES": 1000}, "minutes")],
)
def test_an_idle_or_overlong_person_forfeits_and_the_match_ends_early(
    server: Server, monkeypatch: Any, bound: dict[str, float], says: str
) -> None:
    monkeypatch.setattr(people.bounds, "CLOCK", 0.3)
    monkeypatch.setattr(people.bounds, "WATCH_SECONDS", 0.05, raising=False)  # (raising: the test fails on its checks)
    for key, value in bound.items():
        monkeypatch.setattr(people.bounds, key, value, raising=False)
    # fixed deals: the operating system's draw may leave the person too few moves to lose before the last deal
    monkeypatch.setattr(server.arena, "draw_secret", lambda: hashlib.sha256(b"an idle person1").hexdigest())
    got, seat = _post(server, {"name": "idle", "opponents": ["random", "random"], "deals": 3}, **_from("10.3.0.1"))
    assert got == 200
    ws = raw(server, {"type": "hello", "protocol": 1, "name": "idle", "token": seat["token"]})
    told: list[dict[str, Any]] = []
    deadline = time.monotonic() + WAIT
    while not told or told[-1].get("type") != "match_end":  # never answers a turn
        assert time.monotonic() < deadline
        told.append(json.loads(ws.recv(timeout=WAIT)))
        if len(told) == 2:  # while its match is under way, its visitor may not ask for another seat
            got, answer = _post(server, {"name": "idle2", "opponents": ["random"]}, **_from("10.3.0.1"))
            assert got == 429 and "under way" in answer["error"]
    ws.close()
    assert any(m["type"] == "error" and says in m["message"] and "fallback" in m["message"] for m in told)
    assert told[-1]["status"] == "aborted"
    ends = [m for m in told if m["type"] == "deal_end"]
    assert len(ends) < 3  # 3 deals asked for: it stopped after the deal under way
    person = told[-1]["results"][0]
    assert person["seat"] == "bot:person:idle" and person["counts"]["forfeits"] == 1
    deadline = time.monotonic() + WAIT
    while "idle" in server.arena.people.seats:  # its seat, and with it the table's bots, let go
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert server.arena.people.registry.slots["person:idle"].match is None


def test_an_expired_or_wrong_seat_token_is_refused(server: Server, monkeypatch: Any) -> None:
    monkeypatch.setattr(people.bounds, "SEAT_SECONDS", -1.0)
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
    found = [m for m in people.people_matches(server.store) if m["person"] == "grace"]  # other tests' people too
    assert len(found) == 1
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
    assert "grace" in [m["person"] for m in json.loads(_get(server, "/api/people"))["matches"]]

    ws = raw(server, {"type": "hello", "protocol": 1, "name": "grace", "token": seat["token"]})
    assert "wrong token" in json.loads(ws.recv(timeout=WAIT))["message"]  # forgotten after the match
    ws.close()


def test_the_people_page_escapes_every_name() -> None:
    found = [
        {
            "match": "0123456789abcdef",
            "created": 0.0,
            "status": "finished",
            "person": "<b>x</b>",
            "seats": ["bot:person:<b>x</b>", "bot:<script>alert(1)</script>", "heuristic"],
            "deals": 1,
            "chips": 1.0,
            "advantage": 0.5,
        }
    ]
    page = people.people_page(found)
    assert "<script>" not in page and "<b>x</b>" not in page
    assert "&lt;script&gt;" in page and "&lt;b&gt;x&lt;/b&gt;" in page


def test_the_play_page_and_the_tables_files_are_served(server: Server) -> None:
    page = _get(server, "/play")
    assert "/arena-static/people.js" in page and "/static/table.js" in page
    assert "renderBoard" in _get(server, "/static/table.js")
    assert "stopImmediatePropagation" in _get(server, "/arena-static/people.js")
