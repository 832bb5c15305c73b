"""The arena over real sockets on 127.0.0.1: matches of built-in agents and Python remote bots, every message held
to its JSON Schema, hidden cards relabelled at the socket, the clock, illegal and malformed answers, disconnects,
tokens, and the limits. No timing is asserted: a clock test uses a bot that never answers."""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from arena_helpers import WAIT, Recorder, Server, arena_server, hello, raw, start  # noqa: F401 (arena_server: the fixture 'server')

from bourre_env import core
from bourre_env.core.rules import Rules
from train.arena import protocol
from train.arena.client import AgentBot

VALIDATORS = {kind: jsonschema.Draft202012Validator(protocol.schema(kind)) for kind in protocol.SERVER_TYPES}


def validate(message: dict[str, Any]) -> None:
    VALIDATORS[message["type"]].validate(message)


def test_a_match_of_a_builtin_agent_a_python_bot_and_an_agent_bot(server: Server) -> None:
    (a, ta), (b, tb) = server.new_bot(), server.new_bot()
    first, agent = Recorder(observation=True), AgentBot("heuristic")
    threads = [start(first, server, a, ta), start(agent, server, b, tb)]
    status, answer = server.match({"seats": ["heuristic", f"bot:{a}", f"bot:{b}"], "deals": 6})
    assert status == 200, answer
    for thread in threads:
        thread.join(WAIT)
    report = answer["report"]
    assert report["status"] == "finished" and report["deals"] == 6 and report["players"] == 3
    by_label = {r["label"]: r for r in report["results"]}
    assert by_label["heuristic"]["counts"] is None
    for name in (a, b):
        counts = by_label[f"bot:{name}"]["counts"]
        assert counts["decisions"] > 0 and counts["fallbacks"] == 0 and counts["disconnects"] == 0
    # the table advantages of one table sum to 0: each entry's is its chips minus the mean of the others'
    assert sum(r["advantage"] for r in report["results"]) == pytest.approx(0.0, abs=1e-9)
    for message in first.messages:
        validate(message)
    kinds = [m["type"] for m in first.messages]
    assert kinds[0] == "match_start" and kinds[-1] == "match_end"
    assert kinds.count("deal_start") == kinds.count("deal_end") == 6  # each deal played once
    turns = [m for m in first.messages if m["type"] == "turn"]
    assert all(len(t["observation"]) > 0 and t["view"]["to_act"] == t["seat"] for t in turns)
    assert all(t["legal"][0]["text"] for t in turns)
    stored = server.store.match(report["match"])
    assert stored is not None and stored["status"] == "finished" and stored["games"] == 6
    assert "bot:" + a in json.loads(stored["report"])["results"][1]["label"]


def _relabel_hidden(s: np.ndarray, rules: Rules, viewer: int, rng: np.random.Generator) -> np.ndarray:
    """Every card ``viewer`` cannot see, permuted everywhere in the state (tests/test_no_leak.py's relabelling)."""
    n = rules.num_players
    known = int(s[core.S_HAND + viewer]) | int(s[core.S_PLAYED]) | int(s[core.S_DISCARDS + viewer])
    if s[core.S_FACE] >= 0:
        known |= 1 << int(s[core.S_FACE])
    hidden = [c for c in rules.deck_cards() if not known >> c & 1]
    perm = dict(zip(hidden, rng.permutation(hidden).tolist(), strict=True))

    def remap(mask: int) -> int:
        return sum(1 << perm.get(c, c) for c in range(52) if mask >> c & 1)

    t = s.copy()
    for q in range(n):
        if q != viewer:
            for base in (core.S_HAND, core.S_DISCARDS, core.S_KNOWN_OUT):
                t[base + q] = remap(int(s[base + q]))
    for base, length in ((core.S_STOCK, core.S_STOCK_LEN), (core.S_PILE, core.S_PILE_LEN)):
        for i in range(int(s[length])):
            t[base + i] = perm.get(int(s[base + i]), int(s[base + i]))
    t[core.S_RNG] = rng.integers(2**62)
    return t


def test_hidden_cards_never_change_a_message_on_the_wire(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every turn a bot receives over the socket is rebuilt from the env's state at its decision (an observer of the
    match's table keeps it) where every card its seat cannot see is relabelled: the message, observation vector
    included, must be the very one that went over the wire."""
    from train.arena import match as arena_match
    from train.table import Decision, Observer

    at_remote: list[tuple[np.ndarray, Rules, int]] = []  # each remote seat's decision: the state, the rules, the seat

    class RemoteDecisions(Observer):
        def stepped(self, decision: Decision, action: int, before: np.ndarray, env: Any) -> None:
            if decision.label.startswith("bot:"):
                at_remote.append((before, env.unwrapped.rules, decision.seat))

    # the match's games alone: its par games are played by train.arena.games, which this leaves as it is
    monkeypatch.setattr(
        arena_match, "play_game", functools.partial(arena_match.play_game, observers=(RemoteDecisions(),))
    )
    (a, ta), (b, tb) = server.new_bot(), server.new_bot()
    bots = [Recorder(observation=True), Recorder(observation=False)]
    threads = [start(bots[0], server, a, ta), start(bots[1], server, b, tb)]
    deals = 4
    status, answer = server.match({"seats": [f"bot:{a}", "heuristic", f"bot:{b}", "random"], "deals": deals})
    assert status == 200, answer
    for thread in threads:
        thread.join(WAIT)
    received = sorted((m for bot in bots for m in bot.messages if m["type"] == "turn"), key=lambda m: m["turn"])
    # the match numbers its remote decisions from 1, and every one of them sent its bot a turn
    assert [m["turn"] for m in received] == list(range(1, len(at_remote) + 1)) and received
    rng = np.random.default_rng(0)
    changed = 0
    for (state, rules, seat), message in zip(at_remote, received, strict=True):
        assert message["seat"] == seat
        for _ in range(3):
            other = _relabel_hidden(state, rules, seat, rng)
            changed += int(not np.array_equal(other, state))
            again = protocol.turn(
                match=message["match"],
                number=message["turn"],
                deal=message["deal"],
                state=other,
                params=rules.params(),
                rules=rules,
                seat=seat,
                clock_ms=message["clock_ms"],
                chips=message["view"]["chips"],
                with_observation="observation" in message,
                game=(message["deal"] + 1, deals),  # the single format: one game a deal
            )
            assert json.loads(protocol.encode(again)) == message
    assert changed > 0  # the relabelling moved cards: the check is not vacuous


def test_a_bot_that_never_answers_loses_its_moves_to_the_fallback(server: Server) -> None:
    name, token = server.new_bot()
    ws = raw(server, hello(name, token))
    assert json.loads(ws.recv(WAIT))["type"] == "welcome"
    server.wait_connected(name)
    status, answer = server.match({"seats": ["heuristic", f"bot:{name}"], "deals": 1, "clock": 0.05})
    assert status == 200, answer
    counts = answer["report"]["results"][1]["counts"]
    assert counts["decisions"] > 0 and counts["timeouts"] == counts["fallbacks"] == counts["decisions"]
    errors = [m for m in _drain(ws) if m["type"] == "error"]
    assert len(errors) == counts["timeouts"] and all("fallback (heuristic)" in e["message"] for e in errors)
    ws.close()


def _drain(ws: Any) -> list[dict[str, Any]]:
    out = []
    while True:
        message = json.loads(ws.recv(WAIT))
        out.append(message)
        validate(message)
        if message["type"] == "match_end":
            return out


def test_illegal_and_malformed_answers_are_told_once_and_counted(server: Server) -> None:
    name, token = server.new_bot()
    ws = raw(server, hello(name, token))
    assert json.loads(ws.recv(WAIT))["type"] == "welcome"
    server.wait_connected(name)
    result: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: result.update(answer=server.match({"seats": [f"bot:{name}", "random"], "deals": 2})),
        daemon=True,
    )
    thread.start()
    errors, answers = [], 0
    while True:
        message = json.loads(ws.recv(WAIT))
        validate(message)
        if message["type"] == "turn":
            answers += 1
            if answers % 3 == 1:
                ws.send(json.dumps({"type": "action", "turn": message["turn"], "action": 999}))  # no such action
            elif answers % 3 == 2:
                ws.send('{"type": "action", "turn": 1, "turn": 2}')  # a key twice
            else:
                ws.send("x" * (protocol.MAX_MESSAGE_BYTES + 1))
        elif message["type"] == "error":
            errors.append(message)
        elif message["type"] == "match_end":
            break
    thread.join(WAIT)
    status, answer = result["answer"]
    assert status == 200
    counts = answer["report"]["results"][0]["counts"]
    assert counts["illegal"] == (answers + 2) // 3 and counts["malformed"] == answers - counts["illegal"]
    assert counts["fallbacks"] == counts["decisions"] == answers == len(errors)
    assert not any("Traceback" in e["message"] for e in errors)
    ws.close()


@pytest.mark.parametrize(
    ("grace", "away", "in_time"),
    [(30.0, 0.0, True), (0.2, 0.6, False)],
    ids=["back-in-time", "back-too-late"],
)
def test_a_bot_that_reconnects_within_the_grace_period_takes_its_seat_back(
    server: Server, grace: float, away: float, in_time: bool
) -> None:
    """A bot that drops mid-turn: the fallback plays its moves while it is away; back within the match's grace
    period it takes its seat back, back past it it has forfeited, is told so once and is sent no turn again, yet
    follows the match to its end."""
    name, token = server.new_bot()
    other, other_token = server.new_bot()
    back_in = threading.Event()

    def hold(turn: dict[str, Any]) -> int:
        # the other seat thinks (well inside its clock) until the first bot is back: the match cannot end meanwhile,
        # however fast the fallback plays the absent seat and however slowly the machine runs this test
        back_in.wait(1.5)
        return int(turn["legal"][0]["action"])

    holder = start(Recorder(hold), server, other, other_token)
    ws = raw(server, hello(name, token))
    assert json.loads(ws.recv(WAIT))["type"] == "welcome"
    server.wait_connected(name)
    result: dict[str, Any] = {}
    body = {"seats": [f"bot:{name}", f"bot:{other}"], "deals": 3, "clock": 2.0, "grace": grace}
    thread = threading.Thread(target=lambda: result.update(answer=server.match(body)), daemon=True)
    thread.start()
    while (message := json.loads(ws.recv(WAIT)))["type"] != "turn":
        if message["type"] == "match_start":
            validate(message)
            assert message["grace_ms"] == round(grace * 1000)
    ws.close()  # gone in the middle of a turn
    while name in server.arena.registry.connected():  # one live connection per token: until the server notices
        time.sleep(0.01)
    time.sleep(away)  # the grace period starts when the server notices, so the bot is away at least this long
    back = Recorder()
    returned = start(back, server, name, token)
    back_in.set()
    returned.join(WAIT)
    thread.join(WAIT)
    holder.join(WAIT)
    status, answer = result["answer"]
    assert status == 200, answer
    report = answer["report"]
    assert report["grace"] == grace
    counts = report["results"][0]["counts"]
    assert counts["disconnects"] == 1 and counts["absent"] + counts["forfeited"] >= 1
    assert counts["fallbacks"] == counts["absent"] + counts["forfeited"]  # the bot itself never erred
    for message in back.messages:
        validate(message)
    answered = sum(1 for m in back.messages if m["type"] == "turn")
    told = [m for m in back.messages if m["type"] == "error"]
    assert back.messages[-1]["type"] == "match_end"  # a bot that forfeited still follows the match to its end
    if in_time:
        assert counts["forfeits"] == counts["forfeited"] == 0 and not told
        assert answered > 0 and counts["decisions"] == answered + counts["absent"]
    else:
        assert counts["forfeits"] == 1 and counts["forfeited"] > 0 and answered == 0
        assert len(told) == 1 and "forfeited its seat" in told[0]["message"] and not told[0]["fatal"]
        assert counts["decisions"] == counts["absent"] + counts["forfeited"]
        assert "forfeited its seat" in answer["text"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"token": "wrong"}, "wrong token"),
        ({"name": "nobody"}, "unknown bot name"),
        ({"protocol": 2}, "protocol version 2 is not spoken here: this server speaks version 1"),
        ({"type": "action"}, "missing"),
        ({"token": "\ud800"}, "lone UTF-16 surrogate"),  # a 500 and a traceback once
        ({"name": "b" + "\u00e9" * 600}, "past the limit of 1024"),  # 1,200 bytes in 600 characters
    ],
)
def test_a_bad_hello_is_refused_with_one_clear_message(server: Server, change: dict[str, Any], expected: str) -> None:
    name, token = server.new_bot()
    ws = raw(server, {**hello(name, token), **change})
    refusal = json.loads(ws.recv(WAIT))
    validate(refusal)
    assert refusal["type"] == "error" and refusal["fatal"] and expected in refusal["message"]
    ws.close()


def test_one_live_connection_per_token_and_origin_checks(server: Server) -> None:
    name, token = server.new_bot()
    first = raw(server, hello(name, token))
    assert json.loads(first.recv(WAIT))["type"] == "welcome"
    second = raw(server, hello(name, token))
    assert "connected already" in json.loads(second.recv(WAIT))["message"]
    second.close()
    first.close()
    other = raw(server, None, Origin="http://evil.example")  # refused before any hello
    refusal = json.loads(other.recv(WAIT))
    assert refusal["fatal"] and "Origin" in refusal["message"]
    other.close()
    status, answer = server.match({"seats": ["heuristic", "random"]}, {"Origin": "http://evil.example"})
    assert status == 403


def test_tokens_are_stored_as_hashes_only(server: Server) -> None:
    name, token = server.new_bot()
    db = Path(str(server.store.engine.url.database))
    for path in (db, db.with_name(db.name + "-wal")):  # WAL mode: the newest pages are in the log
        assert not path.exists() or token.encode() not in path.read_bytes()
    assert server.store.check_token(name, token) and not server.store.check_token(name, token + "x")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"seats": ["heuristic", "bot:nobody"]}, "bot:nobody is not connected"),
        ({"seats": ["heuristic", "ppo:/etc/passwd"]}, "ppo"),
        ({"seats": ["heuristic", "evil.py:Bot"]}, "evil.py"),
        ({"seats": ["heuristic", "random"], "deals": 0}, "deals"),
        ({"seats": ["heuristic", "random"], "clock": "1"}, "clock"),
        ({"seats": ["heuristic", "random"], "grace": 601}, "grace: expected seconds in 0..600"),
        ({"seats": ["heuristic"], "players": 2}, "seats"),
        ({"seats": ["bot:\ud800", "random"]}, "lone UTF-16 surrogate"),  # a 500 once
    ],
)
def test_a_bad_match_request_is_refused_before_any_deal(server: Server, body: dict[str, Any], expected: str) -> None:
    status, answer = server.match(body)
    assert 400 <= status < 500 and expected in answer["error"]


@pytest.mark.parametrize(
    ("authorization", "expected"),
    [(None, "an operator token is required"), ("Bearer wrong", "unknown operator token"), ("Basic x", "required")],
    ids=["none", "wrong", "not-bearer"],
)
def test_the_operator_routes_need_an_operator_token(server: Server, authorization: str | None, expected: str) -> None:
    status, answer = server.match({"seats": ["heuristic", "random"]}, {"Authorization": authorization or ""})
    assert status == 401 and expected in answer["error"] and "\n" not in answer["error"]
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}/api/bots")
    if authorization:
        request.add_header("Authorization", authorization)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=WAIT)
    assert refused.value.code == 401 and refused.value.headers["WWW-Authenticate"] == "Bearer"
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}/api/bots")
    request.add_header("Authorization", f"Bearer {server.operator}")
    with urllib.request.urlopen(request, timeout=WAIT) as answer_:
        assert "bots" in json.loads(answer_.read())


def test_operator_tokens_are_stored_as_hashes_only(server: Server) -> None:
    token = server.store.add_operator("another")
    db = Path(str(server.store.engine.url.database))
    for path in (db, db.with_name(db.name + "-wal")):
        assert not path.exists() or token.encode() not in path.read_bytes()
    assert server.store.operator_of(token) == "another" and server.store.operator_of(token + "x") is None


def test_the_fallback_is_chosen_per_match(server: Server) -> None:
    """A match may name its fallback among the built-in agents the server offers; the bot hears which at the start,
    and every move the fallback played for it says so."""
    name, token = server.new_bot()
    ws = raw(server, hello(name, token))
    assert json.loads(ws.recv(WAIT))["type"] == "welcome"
    server.wait_connected(name)
    body = {"seats": ["heuristic", f"bot:{name}"], "deals": 1, "clock": 0.05, "fallback": "random"}
    status, answer = server.match(body)
    assert status == 200, answer
    report = answer["report"]
    assert report["fallback"] == "random" and "fallback random" in answer["text"]
    messages = _drain(ws)
    assert messages[0]["type"] == "match_start" and messages[0]["fallback"] == "random"
    errors = [m for m in messages if m["type"] == "error"]
    assert errors and all("the fallback (random) played this move" in e["message"] for e in errors)
    assert len(errors) == report["results"][1]["counts"]["timeouts"]
    ws.close()


@pytest.mark.parametrize(
    ("fallback", "expected"),
    [
        ("ppo:/etc/passwd", "fallback: "),
        ("evil.py:Bot", "fallback: "),
        ("bot:alice", "fallback: expected the spec of a built-in agent"),
        (3, "fallback: expected the spec of a built-in agent"),
        ("llm", "fallback: "),
    ],
)
def test_a_fallback_the_server_does_not_offer_is_refused(server: Server, fallback: Any, expected: str) -> None:
    status, answer = server.match({"seats": ["heuristic", "random"], "fallback": fallback})
    assert status == 400 and answer["error"].startswith(expected), answer


def test_a_websocket_for_another_host_is_refused_at_its_handshake_without_an_error_logged(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    """A page elsewhere cannot rebind its name to a loopback server: a WebSocket naming another ``Host`` gets 403 at
    its handshake (Starlette's answer was an HTTP response the socket could not send, and uvicorn logged an error for
    each such request); a page for another host is still a 400."""
    import socket

    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    with caplog.at_level(logging.INFO):
        for _ in range(3):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT)  # the name: another host's
            with pytest.raises(InvalidStatus) as refused:
                connect(f"ws://evil.example:{server.port}/bot", sock=sock, open_timeout=WAIT)
            assert refused.value.response.status_code == 403
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}/leaderboard", headers={"Host": "evil.example"})
    with pytest.raises(urllib.error.HTTPError) as page:
        urllib.request.urlopen(request, timeout=WAIT)
    assert page.value.code == 400
    name, token = server.new_bot()
    ws = raw(server, hello(name, token))  # this machine's name: welcomed
    assert json.loads(ws.recv(WAIT))["type"] == "welcome"
    ws.close()
