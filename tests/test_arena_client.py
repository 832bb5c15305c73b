"""The arena's client (``train.arena.client``) against a hostile or broken server (``hostile_server.py``): every
message that breaks the protocol is skipped and counted, a closure that is not about the bot is followed by another
connection, one that is about the bot (its version, name or token) stops it for good, a server that never welcomes
the bot is given up on, and a bot whose ``act`` fails leaves that turn to the server's fallback. No timing is
asserted."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hostile_server import MATCH_END, WELCOME, HostileServer, Script, refuses, sends, turn

from train.arena import client
from train.arena.client import Bot, MalformedMessageError, RefusedError, parse_server, play, stops

WAIT = 120.0


class Recorder(Bot):
    observation = True

    def __init__(self, answers: list[Any] | None = None) -> None:
        self.turns: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        self.answers = answers

    def act(self, turn: dict[str, Any]) -> int:
        self.turns.append(turn)
        if self.answers:
            answer = self.answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer  # type: ignore[no-any-return]
        return int(turn["legal"][0]["action"])

    def on_message(self, message: dict[str, Any]) -> None:
        self.messages.append(message)


def _play(scripts: list[Script], bot: Bot | None = None, **kwargs: Any) -> tuple[HostileServer, Bot]:
    """Play ``bot`` against a server that runs ``scripts``, until a ``match_end`` (or the error ``play`` raises)."""
    server = HostileServer(scripts)
    bot = bot or Recorder()
    try:
        play(bot, server.url, "alice", "token", until=lambda m: m["type"] == "match_end", **kwargs)
    finally:
        server.close()
    return server, bot


BAD_MESSAGES: list[Any] = [
    "{}",
    "[1, 2]",
    "not json",
    b"\x00\x01binary",
    "[" * 100_000 + "]" * 100_000,  # deeper than the parser goes
    {"type": "error", "message": "no fatal field"},
    {"type": "error", "message": "a turn that is not one", "fatal": False, "turn": "x"},
    {"type": "surprise"},
    {"type": 3},
    {"type": "welcome", "protocol": 1, "name": "alice"},  # a second welcome
    {key: value for key, value in turn(2).items() if key != "observation"},
    {key: value for key, value in turn(3).items() if key != "legal"},
    turn(4, legal=[]),
    turn(5, legal=[{"action": 999, "text": "no such action"}]),
    turn(6, legal=[{"action": -1, "text": "no such action"}]),
    turn(7, legal=[{"text": "no action"}]),
    turn(8, legal="52"),
    json.dumps(turn(9)).replace('"turn": 9', '"turn": Infinity'),
    json.dumps(turn(10)).replace('"turn": 10', '"turn": NaN'),
    json.dumps(turn(11)).replace('"turn": 11', '"turn": 1e400'),
    json.dumps(turn(12)).replace('"turn": 12', '"turn": ' + "9" * 5000),
    turn("13"),  # type: ignore[arg-type]
    turn(14.5),  # type: ignore[arg-type]
    turn(-15),
    turn(True),  # type: ignore[arg-type]
    turn(16, observation=[1.0, "x"]),
    turn(17, observation="0"),
    turn(18, view=[]),
    {"type": "deal_start", "match": "m"},
    {"type": "deal_start", "match": "m", "deal": 0, "rotation": 0, "seat": 9, "dealer": 0, "seats": []},
    {"type": "match_start", "match": "m", "players": 2},
    {"type": "deal_end", "match": "m", "deal": 0, "rotation": 0, "seat": 0, "results": []},
    {"type": "match_end", "match": "m", "status": "finished", "results": None},
]


def test_every_message_that_breaks_the_protocol_is_skipped_and_counted(capsys: pytest.CaptureFixture[str]) -> None:
    script = sends(WELCOME, *BAD_MESSAGES, turn(100), MATCH_END, then_close=False)
    server, bot = _play([script], progress=True)
    assert isinstance(bot, Recorder)
    assert [t["turn"] for t in bot.turns] == [100]  # no bad turn reached the bot
    assert [m["type"] for m in bot.messages] == ["match_end"]
    assert server.connections == 1  # skipped, not a reason to connect again
    err = capsys.readouterr().err
    assert f"alice: 1 moves, 0 games, 0 errors, {len(BAD_MESSAGES)} skipped" in err
    assert "skipped a message of the server: " in err and "Traceback" not in err


@pytest.mark.parametrize("text", [m for m in BAD_MESSAGES if not isinstance(m, dict)])
def test_parse_server_names_the_fault_in_one_line(text: str | bytes) -> None:
    with pytest.raises(MalformedMessageError) as caught:
        parse_server(text, observation=True)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 200


def test_a_well_formed_turn_and_its_optional_fields_pass() -> None:
    words = turn(1, text="the view", legal=[{"action": 52, "text": "pass", "label": "pass"}])
    assert parse_server(json.dumps(words), observation=True, words=True)["turn"] == 1
    with pytest.raises(MalformedMessageError, match="label"):
        parse_server(json.dumps(turn(1, text="the view")), words=True)
    error = {"type": "error", "message": "m", "fatal": False, "turn": None, "reason": "rate", "new_field": 1}
    assert parse_server(json.dumps(error))["reason"] == "rate"  # fields a later server adds pass


def test_the_client_action_table_is_the_environment_s() -> None:
    from bourre_env import core

    assert client.NUM_ACTIONS == core.NUM_ACTIONS


@pytest.mark.parametrize(
    ("reason", "message", "stop"),
    [
        ("version", "", True),
        ("auth", "", True),
        ("name", "", True),
        ("hello", "", False),
        ("connected", "", False),
        ("origin", "", False),
        ("rate", "", False),
        ("shutdown", "", False),
        ("something new", "unknown bot name, or a wrong token", False),  # the reason decides where there is one
        # an older server, without reason: its words
        (None, "protocol version 2 is not spoken here: this server speaks version 1", True),
        (None, "unknown bot name, or a wrong token", True),
        (None, "more than 100 messages a second: closed", False),
        (None, "bot 'alice' is connected already: one live connection per token", False),
        (None, "no hello within 5 s", False),
        (None, "the first message must be a hello", False),
    ],
)
def test_a_fatal_error_stops_the_bot_only_when_it_is_about_the_bot(
    reason: str | None, message: str, stop: bool
) -> None:
    error: dict[str, Any] = {"type": "error", "message": message, "fatal": True, "turn": None}
    if reason is not None:
        error["reason"] = reason
    assert stops(error) is stop
    back = sends(WELCOME, MATCH_END, then_close=False)
    if stop:
        with pytest.raises(RefusedError):
            _play([refuses(reason, message), back])
    else:
        server, _ = _play([refuses(reason, message), back])
        assert server.connections == 2


def test_a_closure_that_is_not_about_the_bot_is_followed_by_another_try(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=client.__name__)
    server, bot = _play(
        [
            refuses("rate"),
            refuses("connected"),
            sends("{}"),  # a welcome that is not one
            sends(turn(1)),  # a turn before any welcome
            sends(WELCOME, turn(2)),  # closed mid-match
            sends(WELCOME, "x" * (2**20 + 1)),  # past the client's limit: closed unread
            sends(WELCOME, turn(3), MATCH_END, then_close=False),
        ]
    )
    assert server.connections == 7
    assert isinstance(bot, Recorder) and [t["turn"] for t in bot.turns] == [2, 3]
    said = caplog.text
    assert "closed by the server" in said and "no welcome" in said and "again in 0.2 s" in said
    assert "again in 0.4 s" in said  # not welcomed for long: the wait grows


def test_a_server_that_never_welcomes_is_given_up_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "WELCOME_SECONDS", 0.5)
    server, _ = _play([sends(then_close=False), sends(WELCOME, MATCH_END, then_close=False)])
    assert server.connections == 2


def test_without_reconnect_a_closure_is_a_connection_error() -> None:
    with pytest.raises(ConnectionError, match="closed by the server: refused"):
        _play([refuses("rate")], reconnect=False)


def test_a_bot_whose_act_fails_leaves_the_turn_to_the_fallback_and_plays_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    answers = [RuntimeError("boom"), "52", None, 52.5, True, 53]
    turns = [turn(number) for number in range(1, len(answers) + 1)]
    script = sends(WELCOME, *turns, MATCH_END, then_close=False, read_actions=False)
    server, bot = _play([script], bot=Recorder(answers), progress=True)
    err = capsys.readouterr().err
    assert "alice: 1 moves, 0 games, 0 errors, 5 unanswered" in err
    assert "turn 1 unanswered: act raised RuntimeError: boom" in err and "Traceback" not in err
    assert server.connections == 1


def test_a_numpy_integer_is_an_answer() -> None:
    np = pytest.importorskip("numpy")
    server = HostileServer([sends(WELCOME, turn(1), then_close=False, read_actions=True)])
    try:

        class Numpy(Bot):
            def act(self, turn: dict[str, Any]) -> int:
                return np.int64(53)  # type: ignore[no-any-return]

        async def until_answered() -> None:
            task = asyncio.create_task(client.play_async(Numpy(), server.url, "alice", "token"))
            while not server.got_action.is_set():
                await asyncio.sleep(0.01)
            task.cancel()

        asyncio.run(asyncio.wait_for(until_answered(), WAIT))
    finally:
        server.close()
    assert server.actions == [{"type": "action", "turn": 1, "action": 53}]


def test_a_url_that_is_not_a_websocket_is_one_line() -> None:
    with pytest.raises(ValueError, match="url: "):
        play(Recorder(), "http://127.0.0.1:1/bot", "alice", "token")


def test_the_wait_starts_again_only_after_a_steady_connection(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that welcomes the bot and closes it at once, again and again, slows it down: a welcome alone does
    not reset the wait, a connection held ``STEADY_SECONDS`` does."""
    caplog.set_level(logging.INFO, logger=client.__name__)
    closes = [sends(WELCOME, turn(1)), sends(WELCOME), sends(WELCOME), sends(WELCOME, MATCH_END, then_close=False)]
    _play(closes)
    assert [line.rsplit(" ", 2)[1] for line in caplog.messages] == ["0.2", "0.4", "0.8"]
    caplog.clear()
    monkeypatch.setattr(client, "STEADY_SECONDS", 0.0)
    _play(closes)
    assert [line.rsplit(" ", 2)[1] for line in caplog.messages] == ["0.2", "0.2", "0.2"]


def test_closing_waits_for_the_server_s_close_frame_a_second_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that floods the bot hides its close frame behind the flood, which the bot no longer reads: Ctrl-C
    (``tests/test_arena_connect.py``) would wait the library's default of 10 s for it."""
    from websockets.asyncio import client as websockets_client

    asked: list[dict[str, Any]] = []
    connect = websockets_client.connect

    def recorded(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs)
        return connect(*args, **kwargs)

    monkeypatch.setattr(websockets_client, "connect", recorded)
    _play([sends(WELCOME, MATCH_END, then_close=False)])
    assert asked and all(kwargs.get("close_timeout", 10) <= 1.0 for kwargs in asked)


def test_the_javascript_bot_exits_2_when_refused_and_1_after_another_closure(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parent.parent / "train" / "arena" / "examples"
    node = shutil.which("node")
    if node is None or not (examples / "node_modules" / "ws").is_dir():
        pytest.skip("node, or its ws package, is not installed: npm ci --prefix train/arena/examples")
    (tmp_path / "token").write_text("t")
    cases = [
        ("auth", "refused", 2),
        ("version", "refused", 2),
        ("rate", "too many", 1),
        (None, "unknown bot name, or a wrong token", 2),
        (None, "no hello", 1),
    ]
    for reason, message, status in cases:
        server = HostileServer([refuses(reason, message)])
        command = [node, str(examples / "first_legal.js"), server.url, "alice", str(tmp_path / "token")]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT)
        finally:
            server.close()
        assert done.returncode == status, (reason, message, done.stderr)
