"""The wire of the arena, protocol version 1: every message, built and parsed in one place (``docs/protocol.md``).

Messages are JSON objects, one per WebSocket text frame, each with a ``type``. A bot sends two kinds, ``hello`` (the
first message, once) and ``action``; the server sends the others. ``parse_client`` is the only reader of what a bot
sends: it bounds the work (``MAX_MESSAGE_BYTES`` before parsing, nesting refused by the exact key sets) and answers
every fault with ``ProtocolError``, a one-line message that is sent back to the bot as it is. The JSON Schemas of
``train/arena/schemas/`` describe the same messages; ``tests/test_arena_protocol.py`` holds the builders to them.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

import numpy as np

from bourre_env import core, observation, text
from bourre_env.core import cards
from bourre_env.core.rules import Rules
from bourre_env.history import NotTextError, strict_json
from train.arena.json_text import compact
from train.arena.view import view_of

__all__ = [
    "CLIENT_TYPES",
    "MAX_MESSAGE_BYTES",
    "NAME_PATTERN",
    "PROTOCOL_VERSION",
    "REASONS",
    "SERVER_TYPES",
    "Action",
    "Hello",
    "ProtocolError",
    "deal_end",
    "deal_start",
    "encode",
    "error",
    "match_end",
    "match_start",
    "parse_client",
    "schema",
    "shown_hands",
    "turn",
    "turn_from_view",
    "welcome",
]

PROTOCOL_VERSION = 1
"""The major version; a bot that names another one is refused at its ``hello``."""
MAX_MESSAGE_BYTES = 1024
"""A bot's messages are a hello (a name and a token) or an action: anything longer is a fault, refused unread."""
NAME_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,32}")
"""A bot's name: what an operator gives ``bourre arena add-bot`` and a match names as ``bot:NAME``."""
CLIENT_TYPES = ("hello", "action")
_DEAL_LINE = re.compile(r"^Deal \d+ of \d+;", re.MULTILINE)
SERVER_TYPES = ("welcome", "error", "match_start", "deal_start", "turn", "deal_end", "match_end")


class ProtocolError(ValueError):
    """A bot's message the server refuses; the text is what the bot is told."""


@dataclasses.dataclass(frozen=True)
class Hello:
    protocol: int
    name: str
    token: str
    observation: bool  # send the observation vector of bourre_v0 with every turn
    words: bool = False  # send the view in words and the actions' labels with every turn


@dataclasses.dataclass(frozen=True)
class Action:
    turn: int
    action: int


def _integer(value: Any, what: str) -> int:
    # bool is an int in Python, and 1.0 is a number in JSON: neither is an id
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError(f"{what}: expected an integer, got {json.dumps(value)[:40]}")
    if not 0 <= value < 2**53:  # past it a JavaScript client could not have meant it
        raise ProtocolError(f"{what}: expected an integer in 0..2**53-1, got {value}")
    return value


_WS = "[ \t\n\r]*"  # JSON's whitespace (a regular expression's \s is Unicode's)
_PLAIN_ACTION = re.compile(
    f'{_WS}\\{{{_WS}"type"{_WS}:{_WS}"action"{_WS},{_WS}"turn"{_WS}:{_WS}(0|[1-9][0-9]{{0,15}}){_WS},{_WS}"action"{_WS}:'
    f"{_WS}(0|[1-9][0-9]{{0,15}}){_WS}\\}}{_WS}"
)
"""An action written with its keys in the order of docs/protocol.md, as most bots write it: read without the JSON
parser (every text it matches is a valid action object, with no key twice)."""


def parse_client(data: str | bytes) -> Hello | Action:
    """A bot's message, checked whole; ``ProtocolError`` naming the fault. A binary frame is read as the UTF-8 text
    it holds (docs/protocol.md: some WebSocket libraries send bytes as binary frames; the message is checked the
    same)."""
    size = len(data) if isinstance(data, bytes) or data.isascii() else len(data.encode("utf-8", "surrogatepass"))
    if size > MAX_MESSAGE_BYTES:
        raise ProtocolError(f"message of {size} bytes, past the limit of {MAX_MESSAGE_BYTES}")
    plain = _PLAIN_ACTION.fullmatch(data) if isinstance(data, str) else None
    if plain is not None:
        return Action(_integer(int(plain[1]), "turn"), _integer(int(plain[2]), "action"))
    try:
        message = strict_json(data)
    except NotTextError as err:
        raise ProtocolError(str(err)) from None
    except (ValueError, RecursionError):
        raise ProtocolError("not a JSON object (or a key given twice)") from None
    if not isinstance(message, dict):
        raise ProtocolError("expected a JSON object with a 'type'")
    kind = message.get("type")
    if kind == "hello":
        keys = {"type", "protocol", "name", "token"}
        allowed = keys | {"observation", "words"}
    elif kind == "action":
        keys = allowed = {"type", "turn", "action"}
    else:
        raise ProtocolError(f"type: expected one of {', '.join(CLIENT_TYPES)}, got {json.dumps(kind)[:40]}")
    if not keys <= message.keys() <= allowed:
        missing, extra = sorted(keys - message.keys()), sorted(message.keys() - allowed)
        raise ProtocolError(f"{kind}: missing {missing}, unknown {[k[:20] for k in extra][:5]}")
    if kind == "action":
        return Action(_integer(message["turn"], "turn"), _integer(message["action"], "action"))
    name, token = message["name"], message["token"]
    wants, words = message.get("observation", False), message.get("words", False)
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ProtocolError(f"name: expected 1 to 32 of A-Z a-z 0-9 _ . -, got {json.dumps(name)[:40]}")
    if not isinstance(token, str) or not 1 <= len(token) <= 128:
        raise ProtocolError("token: expected the text that bourre arena add-bot printed")
    if not isinstance(wants, bool):
        raise ProtocolError("observation: expected true or false")
    if not isinstance(words, bool):
        raise ProtocolError("words: expected true or false")
    return Hello(_integer(message["protocol"], "protocol"), name, token, wants, words)


def encode(message: Mapping[str, Any]) -> str:
    """A message as compact JSON text (``json_text.compact``)."""
    return compact(message)


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of one message type (``train/arena/schemas/{kind}.json``)."""
    if kind not in CLIENT_TYPES + SERVER_TYPES:
        raise KeyError(kind)
    text = resources.files("train.arena").joinpath("schemas").joinpath(f"{kind}.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


# ---------------------------------------------------------------------------- what the server sends
def welcome(name: str) -> dict[str, Any]:
    return {"type": "welcome", "protocol": PROTOCOL_VERSION, "name": name}


REASONS = ("version", "auth", "name", "hello", "connected", "origin", "rate")
"""Why the server closed a bot's connection (``reason`` of a fatal ``error``): its protocol version, its name and
token, a name that is not a bot's, a hello malformed, missing or late, a live connection of the bot already, a page of
another site, too many messages that answer no turn. A client retrying after ``version``, ``auth`` or
``name`` would be refused again; after any other it may connect again."""


def error(message: str, fatal: bool = False, turn: int | None = None, reason: str | None = None) -> dict[str, Any]:
    """A fault the bot is told of; ``fatal``: the server closes the connection after it, for ``reason`` (one of
    ``REASONS``; a fatal error always has one)."""
    if fatal and reason not in REASONS:
        raise ValueError(f"a fatal error needs a reason among {REASONS}, got {reason!r}")
    message_: dict[str, Any] = {"type": "error", "message": message, "fatal": fatal, "turn": turn}
    if fatal:
        message_["reason"] = reason
    return message_


def match_start(
    match: str,
    players: int,
    seats: Sequence[str],
    deals: int,
    commitment: str | None,
    clock_ms: int,
    rules: Rules,
    grace: float,
    fallback: str = "heuristic",
    format: str = "single",
    par: str | None = None,
) -> dict[str, Any]:
    """``commitment``: the SHA-256 of the match's secret (``train.arena.match.commitment``), revealed in
    ``match_end``; ``grace``: seconds a bot that loses its connection has to come back before it forfeits its seat;
    ``fallback``: the built-in agent that plays a move the bot could not; ``format`` and ``par``: how the deals are
    played and paired (``train.arena.match``)."""
    return {
        "type": "match_start",
        "match": match,
        "players": players,
        "seats": list(seats),
        "deals": deals,
        "format": format,
        "par": par,
        "commitment": commitment,
        "clock_ms": clock_ms,
        "grace_ms": int(round(grace * 1000)),
        "fallback": fallback,
        "rules": rules_dict(rules),
    }


def rules_dict(rules: Rules) -> dict[str, Any]:
    """The rules as plain JSON values (every field of ``Rules``)."""
    out = {}
    for field in dataclasses.fields(rules):
        value = getattr(rules, field.name)
        out[field.name] = list(value) if isinstance(value, tuple) else value
    return out


def deal_start(match: str, deal: int, rotation: int, seat: int, dealer: int, seats: Sequence[str]) -> dict[str, Any]:
    """Before each deal: ``seats`` names who sits where in this rotation (``bot:NAME`` or an agent spec)."""
    return {
        "type": "deal_start",
        "match": match,
        "deal": deal,
        "rotation": rotation,
        "seat": seat,
        "dealer": dealer,
        "seats": list(seats),
    }


def turn(
    match: str,
    number: int,
    deal: int,
    state: np.ndarray,
    params: np.ndarray,
    rules: Rules,
    seat: int,
    clock_ms: int,
    chips: Sequence[int],
    with_observation: bool,
    with_words: bool = False,
    seen: tuple[np.ndarray, np.ndarray] | None = None,
    game: tuple[int, int] = (1, 1),
) -> dict[str, Any]:
    """The turn of ``seat`` at ``state`` (``turn_from_view``), its observation vector and legal mask computed here
    from the state and ``params``, unless ``seen`` gives them (the env's, for this state and seat). The arena's
    table builds its turns from the decision's observation alone (``turn_from_view``); this one serves the callers
    that hold a state, and the tests that hold the two equal."""
    if seen is None:
        obs = np.empty(observation.OBS_SIZE, dtype=np.float32)
        mask = np.empty(core.NUM_ACTIONS, dtype=np.int8)
        observation.observe_with(state, params, seat, obs, mask, core.new_scratch())
        seen = (obs, mask)
    return turn_from_view(
        seen,
        match=match,
        number=number,
        deal=deal,
        rules=rules,
        seat=seat,
        clock_ms=clock_ms,
        chips=chips,
        with_observation=with_observation,
        with_words=with_words,
        game=game,
    )


def turn_from_view(
    seen: tuple[np.ndarray, np.ndarray],
    *,
    match: str,
    number: int,
    deal: int,
    rules: Rules,
    seat: int,
    clock_ms: int,
    chips: Sequence[int],
    with_observation: bool,
    with_words: bool = False,
    game: tuple[int, int] = (1, 1),
) -> dict[str, Any]:
    """A decision of ``seat``: its view (``train.arena.view.view_of``, the browser table's view, built from the
    seat's observation alone, so it holds what the seat may know and nothing more), the legal actions, the clock.
    ``seen``: the seat's observation vector and legal mask (a table's ``Decision`` holds them); ``chips``: every
    seat's chips in the match so far, in this rotation's seats. ``with_words``: the view in words and each action's
    label as well (a bot asks for them at its hello). ``game``: the game's number in the match and the match's
    games, for the view in words (the env sees one deal at a time) and the view's ``deals_left``, the deals the
    match plays after this one."""
    obs, mask = seen
    view = view_of(obs, mask, rules.num_players, rules.hand_size, seat)
    legal = view.pop("legal")
    view["chips"] = list(chips)
    view["deals_left"] = game[1] - game[0]
    message = {
        "type": "turn",
        "match": match,
        "turn": number,
        "deal": deal,
        "seat": seat,
        "clock_ms": clock_ms,
        "view": view,
        "legal": legal,
    }
    if with_words:
        # the view in words and each action's label (bourre_env.text, as the llm agent reads them): a bot that is a
        # language model needs no rendering of its own, and answers with a label that parse_reply reads back
        words: dict[str, np.ndarray] = {"observation": obs, "action_mask": mask}
        for entry, label in zip(legal, text.action_labels(*text.decision(words)), strict=True):
            entry["label"] = label
        message["text"] = _DEAL_LINE.sub(f"Game {game[0]} of {game[1]} of this match;", text.describe_view(words), 1)
    if with_observation:
        message["observation"] = obs.tolist()
    return message


def shown_hands(record: Mapping[str, Any], seat: int) -> list[list[str]]:
    """What ``seat`` has seen of every hand by the end of a deal (a deal of a hand history, ``bourre_env.history``):
    its own hand (the one it played the tricks with, or laid down), and of every other seat the cards it played to
    the tricks, in the order played. A passed hand is laid face down and discards are never shown, so a seat that
    passed, or stayed and played no trick (a lone player wins without play), shows nothing."""
    played: list[list[str]] = [[] for _ in record["results"]["hands"]]
    for act in record["actions"]:
        if act["phase"] == "trick play":
            played[int(act["seat"])].append(cards.to_str(int(act["action"])))
    played[seat] = list(record["results"]["hands"][seat])
    return played


def deal_end(match: str, deal: int, rotation: int, seat: int, record: Mapping[str, Any]) -> dict[str, Any]:
    """After a game, what a player at the table has seen by then: the decisions, tricks, payments, outcomes and pot
    of every seat, and ``hands`` as ``shown_hands`` gives them. ``record``: the game's deal in its hand history,
    which holds every hidden card (and is published only once the match is over)."""
    results = record["results"]
    keep = ("decisions", "tricks", "payments", "outcomes", "pot")
    return {
        "type": "deal_end",
        "match": match,
        "deal": deal,
        "rotation": rotation,
        "seat": seat,
        "results": {"hands": shown_hands(record, seat), **{key: results[key] for key in keep}},
    }


def match_end(
    match: str,
    status: str,
    results: Sequence[Mapping[str, Any]],
    secret: str | None = None,
    seed: int | None = None,
) -> dict[str, Any]:
    """``status``: finished, or aborted; ``results``: one entry per seat of the match (``train.arena.match``);
    ``secret``: the match's secret, whose hash ``match_start`` sent, and ``seed``, the deals' seed derived from it."""
    return {
        "type": "match_end",
        "match": match,
        "status": status,
        "results": [dict(r) for r in results],
        "secret": secret,
        "seed": seed,
    }
