"""The arena's protocol without a socket: the strict parser of what a bot sends, and the docs' transcript, which is
regenerated from a real match and compared (BOURRE_REGENERATE=1 rewrites it)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from arena_helpers import WAIT, Recorder, Server, arena_server, start  # noqa: F401 (arena_server: the fixture 'server')

import bourre_env
from bourre_env import core, observation
from bourre_env.core.rules import Rules, presets
from train.arena import protocol, view
from train.serve.tables import seat_view

DOC = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
BEGIN, END = "<!-- transcript: begin (tests/test_arena_protocol.py) -->", "<!-- transcript: end -->"


def test_hello_and_action_parse() -> None:
    assert protocol.parse_client('{"type":"hello","protocol":1,"name":"a-b_1.c","token":"t"}') == protocol.Hello(
        1, "a-b_1.c", "t", False
    )
    assert protocol.parse_client(b'{"type":"action","turn":3,"action":52}') == protocol.Action(3, 52)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "not a JSON object"),
        ("[1]", "expected a JSON object"),
        ('{"type":"action","turn":1,"turn":2,"action":3}', "key given twice"),
        ('{"type":"action","turn":1,"action":3.0}', "action: expected an integer"),
        ('{"type":"action","turn":true,"action":3}', "turn: expected an integer"),
        ('{"type":"action","turn":-1,"action":3}', "0..2**53-1"),
        ('{"type":"action","turn":1}', "missing ['action']"),
        ('{"type":"action","turn":1,"action":2,"x":{"y":1}}', "unknown ['x']"),
        ('{"type":"move"}', "type: expected one of hello, action"),
        ('{"type":"hello","protocol":1,"name":"../etc","token":"t"}', "name: expected"),
        ('{"type":"hello","protocol":1,"name":"a","token":""}', "token"),
        ('{"type":"hello","protocol":1,"name":"a","token":"t","observation":1}', "observation"),
        ("[" * 2000, "past the limit"),
        ("[" * 500 + "]" * 500, "expected a JSON object"),
    ],
)
def test_every_bad_message_is_one_clear_error(text: str, expected: str) -> None:
    with pytest.raises(protocol.ProtocolError) as caught:
        protocol.parse_client(text)
    assert expected in str(caught.value)


def test_the_client_schemas_accept_what_the_parser_accepts() -> None:
    jsonschema.Draft202012Validator(protocol.schema("hello")).validate(
        {"type": "hello", "protocol": 1, "name": "alice", "token": "x", "observation": True}
    )
    jsonschema.Draft202012Validator(protocol.schema("action")).validate({"type": "action", "turn": 1, "action": 0})
    for kind in protocol.CLIENT_TYPES + protocol.SERVER_TYPES:
        jsonschema.Draft202012Validator.check_schema(protocol.schema(kind))


TRANSCRIPT_SECRET = "0123456789abcdef" * 4
"""The transcript's secret: a server draws a new one for every match; fixed here so that the page can show one."""


def _transcript(server: Server) -> str:
    """A 2-player match of one deal between the heuristic and a remote bot that plays the first legal action."""
    name, token = "alice", server.store.add_bot("alice")
    bot = Recorder()
    sent: list[dict[str, Any]] = []
    original = bot.act

    def act(turn: dict[str, Any]) -> int:
        action = original(turn)
        sent.append({"type": "action", "turn": turn["turn"], "action": action})
        return action

    bot.act = act  # type: ignore[method-assign]
    thread = start(bot, server, name, token)
    drawn, server.arena.draw_secret = server.arena.draw_secret, lambda: TRANSCRIPT_SECRET  # the same deal every run
    try:
        status, answer = server.match({"seats": ["heuristic", "bot:alice"], "deals": 1})
    finally:
        server.arena.draw_secret = drawn
    assert status == 200, answer
    thread.join(WAIT)
    lines = ['bot    {"type":"hello","protocol":1,"name":"alice","token":"<the token add-bot printed>"}']
    lines.append('server {"type":"welcome","protocol":1,"name":"alice"}')
    answers = iter(sent)
    for message in bot.messages:
        jsonschema.Draft202012Validator(protocol.schema(message["type"])).validate(message)
        lines.append("server " + json.dumps(message, separators=(",", ":")))
        if message["type"] == "turn":
            lines.append("bot    " + json.dumps(next(answers), separators=(",", ":")))
    text = "\n".join(lines)
    return re.sub(r'"match":"[0-9a-f]{16}"', '"match":"0123456789abcdef"', text)


def test_the_docs_transcript_is_a_real_match(server: Server) -> None:
    fresh = _transcript(server)
    doc = DOC.read_text(encoding="utf-8")
    assert BEGIN in doc and END in doc, f"{DOC} lacks its transcript markers"
    head, rest = doc.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    block = f"\n```text\n{fresh}\n```\n"
    if os.environ.get("BOURRE_REGENERATE") == "1":
        DOC.write_text(head + BEGIN + block + END + tail, encoding="utf-8")
    assert body == block, "docs/protocol.md's transcript differs from a real match: BOURRE_REGENERATE=1 rewrites it"


@pytest.mark.parametrize(("preset", "players"), [(p, n) for p in sorted(presets) for n in (2, 5)] + [("standard", 8)])
def test_the_fast_view_is_the_browser_tables_view(preset: str, players: int) -> None:
    """``train.arena.view.view_of`` (the arena's hot path) against ``train.serve.tables.seat_view`` (the oracle), for
    every seat at every decision of random games, legal actions included; and the turn built from the env's own
    observation is the turn built from the state."""
    from bourre_env.core.rules import make_params

    rules = Rules.from_options(preset, num_players=players)
    params = make_params(rules)
    env = bourre_env.env(rules=preset, num_players=players)
    rng = np.random.default_rng(players)
    checked = 0
    for game in range(4):
        env.reset(seed=game)
        for name in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            state = env.unwrapped.state_vector
            for seat in range(players):
                expected = seat_view(state, params, rules, seat)
                seen_obs = np.empty(observation.OBS_SIZE, dtype=np.float32)
                seen_mask = np.empty(core.NUM_ACTIONS, dtype=np.int8)
                observation.observe_with(state, params, seat, seen_obs, seen_mask, core.new_scratch())
                for _ in range(2):  # built, then from the cache of draw decisions
                    assert view.view_of(seen_obs, seen_mask, players, rules.hand_size, seat) == expected
                checked += 1
            seat = env.unwrapped.agent_name_mapping[name]
            from_state = protocol.turn("0" * 16, 1, 0, state, params, rules, seat, 1000, [0] * players, True, True)
            seen = (obs["observation"], obs["action_mask"])
            again = protocol.turn("0" * 16, 1, 0, state, params, rules, seat, 1000, [0] * players, True, True, seen)
            assert again == from_state
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert checked > 0


def test_words_are_sent_only_to_a_bot_that_asks_for_them() -> None:
    from bourre_env.core.rules import make_params

    rules = Rules.from_options(num_players=3)
    env = bourre_env.env(num_players=3)
    env.reset(seed=1)
    seat = env.unwrapped.agent_name_mapping[env.agent_selection]
    args = ("0" * 16, 1, 0, env.unwrapped.state_vector, make_params(rules), rules, seat, 1000, [0, 0, 0], False)
    plain, worded = protocol.turn(*args), protocol.turn(*args, True)
    assert "text" not in plain and all("label" not in entry for entry in plain["legal"])
    assert worded["text"].startswith("Bourr") and all(entry["label"] for entry in worded["legal"])
    assert {**worded, "text": None, "legal": None} == {**plain, "text": None, "legal": None}
    jsonschema.Draft202012Validator(protocol.schema("turn")).validate(plain)
    jsonschema.Draft202012Validator(protocol.schema("turn")).validate(worded)
    hello = '{"type":"hello","protocol":1,"name":"a","token":"t","words":true}'
    assert protocol.parse_client(hello) == protocol.Hello(1, "a", "t", False, True)


def _limits_rows() -> list[list[str]]:
    section = DOC.read_text(encoding="utf-8").split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split(" | ") for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows[1:]]  # past the header


def test_every_constant_the_limits_table_names_is_in_the_code_and_the_keepalive_is_the_servers() -> None:
    import importlib

    rows = _limits_rows()
    assert len(rows) >= 8
    for limit, _, constants in rows:
        module = None
        for name in re.findall(r"`([A-Za-z_.]+)`", constants):
            parts = name.split(".")
            if parts[0][0].islower():  # a module of train.arena, then attributes
                module, parts = importlib.import_module(f"train.arena.{parts[0]}"), parts[1:]
            assert module is not None, f"{limit}: {name} names no module"
            found: Any = module
            for attribute in parts:
                assert hasattr(found, attribute), f"the limits table's {name} ({limit}) is not in the code"
                found = getattr(found, attribute)
    from train.arena import server

    keepalive = next(row for row in rows if row[0] == "keepalive")[1]
    every, within = (float(x) for x in re.findall(r"(\d+) s", keepalive))
    assert (every, within) == (server.PING_SECONDS, server.PING_TIMEOUT_SECONDS)
    options = server.ws_options()
    assert (options["ws_ping_interval"], options["ws_ping_timeout"]) == (every, within)
    words = " ".join(DOC.read_text(encoding="utf-8").split())
    assert f"the server pings every {every:g} s" in words  # the close codes' paragraph says it too


def test_the_doc_lists_every_phase_of_the_turn_schema_and_every_status_of_the_turned_card() -> None:
    schema = json.loads((Path(protocol.__file__).parent / "schemas" / "turn.json").read_text(encoding="utf-8"))
    phases = schema["properties"]["view"]["properties"]["phase"]["enum"]
    words = " ".join(DOC.read_text(encoding="utf-8").split())
    sentence = words.split("Its `phase` is one of ", 1)[1].split(" (which", 1)[0]
    assert re.findall(r"`([a-z ]+)`", sentence) == phases
    statuses = words.split("has a `status` of ", 1)[1].split(". ", 1)[0]
    assert tuple(re.findall(r"`([a-z' ]+)`", statuses)) == view._FACE_NAMES
