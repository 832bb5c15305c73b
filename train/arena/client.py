"""A remote bot in Python: subclass ``Bot``, return an action id from ``act``, and ``play`` it against a server.

```python
from train.arena.client import Bot, play

class FirstLegal(Bot):
    def act(self, turn):
        return turn["legal"][0]["action"]

play(FirstLegal(), "ws://127.0.0.1:8765/bot", "alice", open("alice.token").read().strip())
```

This module needs the ``websockets`` package and nothing of the project's agents; ``AgentBot`` plays any
``agents.make`` spec (importing the agents only when it is built). ``play_async`` is the same loop as ``play``, as a
coroutine, so that one process can run many bots on one event loop.

What the loop does with what comes its way:

* **Reconnection.** ``play`` connects again after any closure that is not about the bot itself: a lost connection, a
  server that restarts (it takes the bot back as soon as it listens again), one that closes the bot with a fatal
  ``error`` for another reason (too many messages, a connection of the bot still registered, a late hello, the
  server stopping), one that never sends its ``welcome`` (given up after ``WELCOME_SECONDS``), one that answers the
  handshake with anything but a welcome. It waits 0.2 s before the first try, doubling to 5 s; the wait starts again
  from 0.2 s only after a connection that was welcomed and lasted ``STEADY_SECONDS``, so a bot that a server closes
  in a loop is slowed down. A server back within the match's grace period gives the bot its seat back.
* **Refusal.** It stops for good, with ``RefusedError``, when a fatal ``error`` is about the bot: its ``reason`` is
  ``version`` (a protocol version the server does not speak), ``auth`` (an unknown name or a wrong token) or
  ``name`` (a name the server refuses). From a server that gives no ``reason``, the same when the message says the
  version is not spoken, or names an unknown bot or a wrong token.
* **A message that breaks the protocol** (not JSON, not an object, a binary frame, an unknown type, a field missing
  or of the wrong kind, an action id out of the action table, more than ``MAX_MESSAGE_BYTES``...) is skipped and
  counted (``skipped`` on the progress line); a turn skipped this way gets no answer, so the server's fallback plays
  it. Past ``MAX_MESSAGE_BYTES`` the connection is closed unread and made again. ``parse_server`` is the one place
  every message of the server is checked.
* **A bot that fails.** ``act`` raising, or returning anything but an integer, leaves that turn unanswered (the
  server's fallback plays it, counted as a timeout in the match report) and counts it (``unanswered``); an
  ``on_message`` that raises is counted the same way. The connection carries on.

``act`` runs on the connection's event loop: a bot whose ``act`` may take long (a search, a model) sets
``in_thread``, and ``act`` runs in a worker thread instead, so that the connection's keepalive is answered meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import operator
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["AgentBot", "Bot", "MalformedMessageError", "RefusedError", "parse_server", "play", "play_async", "stops"]

PROTOCOL_VERSION = 1
NUM_ACTIONS = 117
"""The action ids of protocol version 1 are 0 to 116, the table of ``bourre_env.actions`` (a test holds this to
``bourre_env.core.NUM_ACTIONS``: the client imports nothing of the project)."""
MAX_MESSAGE_BYTES = 2**20
"""A message of the server past this closes the connection unread (a turn with words and the observation is about
10 KB)."""
WELCOME_SECONDS = 10.0
"""A server that has not welcomed the bot by then is given up on, and tried again."""
STEADY_SECONDS = 30.0
"""A connection welcomed and held this long resets the wait before the next try to ``FIRST_WAIT``."""
FIRST_WAIT, LAST_WAIT = 0.2, 5.0
CLOSE_SECONDS = 1.0
"""How long closing waits for the server's close frame: a server that floods the bot never reads it."""
STOP_REASONS = frozenset({"version", "auth", "name"})
"""The ``reason`` of a fatal error that retrying would meet again: the bot stops for good."""
MAX_INTEGER = 2**53

log = logging.getLogger(__name__)


class RefusedError(RuntimeError):
    """The server refused the bot itself (its protocol version, name or token): retrying would be refused again."""


class MalformedMessageError(ValueError):
    """A message of the server that breaks the protocol; the text says how, in one line."""


class _RetryError(Exception):
    """The connection is of no use (closed by the server, no welcome): connect again."""


class Bot:
    """A remote bot: ``act`` gets a ``turn`` message (``docs/protocol.md``) and returns an action id."""

    observation = False
    """True: each turn also carries ``observation``, the seat's observation vector of ``bourre_v0``."""
    words = False
    """True: each turn also carries ``text``, the view in words, and a ``label`` per legal action (for a bot that is
    a language model)."""
    in_thread = False
    """True: ``act`` runs in a worker thread (an ``act`` that may take seconds); False: on the event loop."""

    def act(self, turn: dict[str, Any]) -> int:
        raise NotImplementedError

    def on_message(self, message: dict[str, Any]) -> None:
        """Every other message (``match_start``, ``deal_start``, ``deal_end``, ``match_end``, ``error``)."""


class AgentBot(Bot):
    """An ``agents.make`` spec (``heuristic``, ``file.py:Class``, ``module:Class``, ``ppo:PATH``) as a remote bot."""

    observation = True
    in_thread = True

    def __init__(self, spec: str, seed: int = 0) -> None:
        import agents

        self.agent = agents.make(spec, seed)
        self.spec = spec
        self.session = False  # the match under way is a session: the agent is reset once, at its first deal

    def act(self, turn: dict[str, Any]) -> int:
        import numpy as np

        from bourre_env import core, observation

        vector = np.asarray(turn["observation"], dtype=np.float32)
        if vector.shape != (observation.OBS_SIZE,):
            raise ValueError(f"observation: {vector.size} numbers, expected {observation.OBS_SIZE}")
        mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
        mask[[entry["action"] for entry in turn["legal"]]] = 1
        return int(self.agent.act({"observation": vector, "action_mask": mask}))  # type: ignore[arg-type]

    def on_message(self, message: dict[str, Any]) -> None:
        # reset as evaluation resets agents: before each game, a deal or a whole session (whose agents may carry
        # what they learn of the table from one deal to the next)
        if message["type"] == "match_start":
            self.session = message.get("format") == "session"
        reset = getattr(self.agent, "reset", None)
        if message["type"] == "deal_start" and callable(reset) and not (self.session and message["deal"] > 0):
            reset()


# ---------------------------------------------------------------------------------------- the server's messages
def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _integer(low: int = 0, high: int = MAX_INTEGER) -> Callable[[Any, str], None]:
    def check(value: Any, field: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise MalformedMessageError(f"{field}: expected an integer from {low} to {high}, got {_shown(value)}")

    return check


def _kind(kind: type, name: str) -> Callable[[Any, str], None]:
    def check(value: Any, field: str) -> None:
        if not isinstance(value, kind):
            raise MalformedMessageError(f"{field}: expected {name}, got {_shown(value)}")

    return check


def _strings(value: Any, field: str) -> None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise MalformedMessageError(f"{field}: expected a list of strings, got {_shown(value)}")


def _objects(value: Any, field: str) -> None:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise MalformedMessageError(f"{field}: expected a list of objects, got {_shown(value)}")


def _version(value: Any, field: str) -> None:
    if isinstance(value, bool) or value != PROTOCOL_VERSION:
        raise MalformedMessageError(f"{field}: expected {PROTOCOL_VERSION}, got {_shown(value)}")


def _legal(value: Any, field: str) -> None:
    if not isinstance(value, list) or not 1 <= len(value) <= NUM_ACTIONS:
        raise MalformedMessageError(f"{field}: expected a list of 1 to {NUM_ACTIONS} actions, got {_shown(value)}")
    action = _integer(0, NUM_ACTIONS - 1)
    for index, entry in enumerate(value):
        if not isinstance(entry, dict) or "action" not in entry:
            raise MalformedMessageError(f"{field}[{index}]: expected an object with an action, got {_shown(entry)}")
        action(entry["action"], f"{field}[{index}].action")


def _numbers(value: Any, field: str) -> None:
    # json.loads gives no NaN or infinity here (parse_server refuses them), but a huge literal overflows to inf
    if not isinstance(value, list) or not all(
        not isinstance(x, bool) and isinstance(x, int | float) and math.isfinite(x) for x in value
    ):
        raise MalformedMessageError(f"{field}: expected a list of finite numbers, got {_shown(value)}")


_STRING, _BOOLEAN, _OBJECT = _kind(str, "a string"), _kind(bool, "true or false"), _kind(dict, "an object")
_COUNT, _SEAT = _integer(), _integer(0, 7)
_FIELDS: dict[str, dict[str, Callable[[Any, str], None]]] = {
    "welcome": {"protocol": _version, "name": _STRING},
    "error": {"message": _STRING, "fatal": _BOOLEAN},
    "match_start": {"match": _STRING, "players": _integer(2, 8), "seats": _strings},
    "deal_start": {
        "match": _STRING,
        "deal": _COUNT,
        "rotation": _COUNT,
        "seat": _SEAT,
        "dealer": _SEAT,
        "seats": _strings,
    },
    "turn": {
        "match": _STRING,
        "turn": _COUNT,
        "deal": _COUNT,
        "seat": _SEAT,
        "clock_ms": _COUNT,
        "view": _OBJECT,
        "legal": _legal,
    },
    "deal_end": {"match": _STRING, "deal": _COUNT, "rotation": _COUNT, "seat": _SEAT, "results": _OBJECT},
    "match_end": {"match": _STRING, "status": _STRING, "results": _objects},
}
"""The fields each message type must have, and how each is checked; other fields pass (a later server may add
some). These are the fields a bot follows a match by, checked so that a bot may read them without checking; the
JSON Schemas of ``train/arena/schemas/`` are the whole contract (this module does without ``jsonschema``)."""
_OPTIONAL: dict[str, dict[str, Callable[[Any, str], None]]] = {
    "error": {"reason": _STRING, "turn": lambda v, f: None if v is None else _COUNT(v, f)},
}


def _refuse_constant(name: str) -> Any:
    raise MalformedMessageError(f"{name} is not JSON")


def parse_server(data: str | bytes, observation: bool = False, words: bool = False) -> dict[str, Any]:
    """A message of the server, checked as far as a bot reads it (``_FIELDS``); ``MalformedMessageError`` in one line
    otherwise. ``observation``, ``words``: what the hello asked for, which every turn must then carry."""
    if not isinstance(data, str):
        raise MalformedMessageError(f"a binary frame of {len(data)} bytes: the protocol sends JSON text")
    try:
        message = json.loads(data, parse_constant=_refuse_constant)
    except MalformedMessageError:
        raise
    except (ValueError, RecursionError) as err:  # RecursionError: nesting too deep for the parser
        raise MalformedMessageError(f"not JSON: {str(err)[:80]}") from None
    if not isinstance(message, dict):
        raise MalformedMessageError(f"expected a JSON object, got {type(message).__name__}")
    kind = message.get("type")
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise MalformedMessageError(f"type: not a message of the server, got {_shown(kind)}")
    for field, check in _FIELDS[kind].items():
        if field not in message:
            raise MalformedMessageError(f"{kind}: no {field}")
        check(message[field], f"{kind}.{field}")
    for field, check in _OPTIONAL.get(kind, {}).items():
        if field in message:
            check(message[field], f"{kind}.{field}")
    if kind == "turn":
        if observation:
            if "observation" not in message:
                raise MalformedMessageError("turn: no observation, which the hello asked for")
            _numbers(message["observation"], "turn.observation")
        if words:
            if "text" not in message:
                raise MalformedMessageError("turn: no text, which the hello asked for")
            _STRING(message["text"], "turn.text")
            for index, entry in enumerate(message["legal"]):
                _STRING(entry.get("label"), f"turn.legal[{index}].label")
    return message


def stops(error: dict[str, Any]) -> bool:
    """Whether a fatal ``error`` is about the bot itself (its version, name or token), so that connecting again
    would be refused again; any other closure is worth another try."""
    reason = error.get("reason")
    if reason is not None:
        return reason in STOP_REASONS
    # a server from before the reason field: its words for a version, name or token it refuses
    text = str(error.get("message", "")).lower()
    return "is not spoken" in text or "unknown bot name" in text or "wrong token" in text


# ---------------------------------------------------------------------------------------- the loop
class _Progress:
    def __init__(self, name: str, show: bool) -> None:
        self.name, self.show = name, show
        self.moves = self.deals = self.errors = self.skipped = self.unanswered = 0
        self.last = self.last_note = 0.0
        self.notes_held = 0

    def line(self, force: bool = False, end: bool = False) -> None:
        now = time.monotonic()
        if self.show and (force or now - self.last > 1.0):
            self.last = now
            faults = "".join(
                f", {count} {what}"
                for count, what in ((self.skipped, "skipped"), (self.unanswered, "unanswered"))
                if count
            )
            print(
                f"\r{self.name}: {self.moves} moves, {self.deals} games, {self.errors} errors{faults}",
                end="\n" if end else "",
                file=sys.stderr,
                flush=True,
            )

    def note(self, text: str) -> None:
        """One line about a fault, at most one a second (a server that floods the bot with bad messages gets a
        line a second, and a count)."""
        now = time.monotonic()
        if now - self.last_note < 1.0:
            self.notes_held += 1
            return
        held, self.notes_held, self.last_note = self.notes_held, 0, now
        more = f" ({held} more since the last line)" if held else ""
        if self.show:
            print(f"\n{self.name}: {text}{more}", file=sys.stderr, flush=True)
        else:
            log.warning("%s: %s%s", self.name, text, more)


def play(
    bot: Bot,
    url: str,
    name: str,
    token: str,
    reconnect: bool = True,
    progress: bool = False,
    until: Callable[[dict[str, Any]], bool] | None = None,
) -> None:
    """Play ``bot`` as ``name`` until ``until(message)`` says so (``None``: for ever), connecting again after any
    closure that is not about the bot when ``reconnect`` (else ``ConnectionError``); ``RefusedError`` when the server
    refuses the bot itself; ``ValueError`` for a URL that is not ``ws://`` or ``wss://``."""
    asyncio.run(play_async(bot, url, name, token, reconnect, progress, until))


def _action(value: Any) -> int:
    """``act``'s answer as an action id: an integer (a numpy one too), not a bool; ``TypeError`` otherwise."""
    if isinstance(value, bool):
        raise TypeError("act returned a bool, not an action id")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"act returned {_shown(value)}, not an action id") from None


async def _session(
    ws: Any,
    bot: Bot,
    hello: str,
    shown: _Progress,
    until: Callable[[dict[str, Any]], bool] | None,
    welcomed: Callable[[], None],
) -> None:
    """One connection, from the hello to its end: returns when ``until`` says so; ``RefusedError``, ``_RetryError`` or
    the socket's own exceptions otherwise."""
    await ws.send(hello)

    def read(data: str | bytes) -> dict[str, Any] | None:
        try:
            return parse_server(data, bot.observation, bot.words)
        except MalformedMessageError as err:
            shown.skipped += 1
            shown.note(f"skipped a message of the server: {err}")
            return None

    def refused(message: dict[str, Any]) -> None:
        if message["fatal"]:
            if stops(message):
                raise RefusedError(message["message"])
            raise _RetryError(f"closed by the server: {message['message']}")

    async def welcome() -> None:
        while True:
            data = await ws.recv()
            message = read(data)
            if message is None:
                raise _RetryError("no welcome: the server's first message breaks the protocol")
            if message["type"] == "welcome":
                return
            if message["type"] != "error":
                raise _RetryError(f"no welcome: the server sent {message['type']} first")
            shown.errors += 1
            refused(message)
            told(message)

    def told(message: dict[str, Any]) -> bool:
        """Hands ``message`` to the bot; whether ``until`` says to stop."""
        try:
            bot.on_message(message)
        except Exception as err:  # the bot's own fault: counted, and the connection goes on
            shown.unanswered += 1
            shown.note(f"on_message raised {type(err).__name__}: {str(err)[:200]}")
        return until is not None and until(message)

    try:
        await asyncio.wait_for(welcome(), WELCOME_SECONDS)
    except asyncio.TimeoutError:  # TimeoutError itself from Python 3.11
        raise _RetryError(f"no welcome within {WELCOME_SECONDS:g} s") from None
    welcomed()
    async for data in ws:
        message = read(data)
        if message is None:
            shown.line()
            continue
        kind = message["type"]
        if kind == "turn":
            try:
                answer = await asyncio.to_thread(bot.act, message) if bot.in_thread else bot.act(message)
                action = _action(answer)
            except Exception as err:  # the bot's own fault: the server's fallback plays this turn
                shown.unanswered += 1
                shown.note(f"turn {message['turn']} unanswered: act raised {type(err).__name__}: {str(err)[:200]}")
            else:
                await ws.send(f'{{"type":"action","turn":{message["turn"]},"action":{action}}}')
                shown.moves += 1
        elif kind == "welcome":
            shown.skipped += 1
            shown.note("skipped a message of the server: a second welcome")
        else:
            if kind == "deal_end":
                shown.deals += 1
            elif kind == "error":
                shown.errors += 1
                refused(message)
            if told(message):
                return
        # a match's end brings the line up to date: else the last deals of a match stay unshown until more comes
        shown.line(force=kind == "match_end")
    raise ConnectionError("the server closed the connection")


async def play_async(
    bot: Bot,
    url: str,
    name: str,
    token: str,
    reconnect: bool = True,
    progress: bool = False,
    until: Callable[[dict[str, Any]], bool] | None = None,
) -> None:
    """``play`` as a coroutine."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidURI, WebSocketException
    from websockets.uri import parse_uri

    try:
        parse_uri(url)
    except InvalidURI as err:
        raise ValueError(f"url: {err}") from None
    shown = _Progress(name, progress)
    wait = FIRST_WAIT
    hello = json.dumps(
        {
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "name": name,
            "token": token,
            "observation": bot.observation,
            "words": bot.words,
        }
    )
    try:
        while True:
            welcomed_at: list[float] = []

            def welcomed(at: list[float] = welcomed_at) -> None:
                at.append(time.monotonic())

            try:
                async with connect(
                    url,
                    max_size=MAX_MESSAGE_BYTES,
                    open_timeout=WELCOME_SECONDS,
                    compression=None,
                    close_timeout=CLOSE_SECONDS,
                ) as ws:
                    await _session(ws, bot, hello, shown, until, welcomed)
                    return
            except (_RetryError, WebSocketException, OSError, EOFError, asyncio.TimeoutError) as err:
                # OSError: ConnectionError too (the server closed the connection); WebSocketException:
                # ConnectionClosed, a handshake answered with another HTTP status, a frame past MAX_MESSAGE_BYTES
                if not reconnect:
                    raise ConnectionError(f"connection to {url} lost: {err}") from None
                if welcomed_at and time.monotonic() - welcomed_at[0] >= STEADY_SECONDS:
                    wait = FIRST_WAIT
                what = str(err) if isinstance(err, _RetryError) else f"connection lost ({err or type(err).__name__})"
                shown.line(force=True)
                if progress:
                    print(f"\n{name}: {what}; again in {wait:.1f} s", file=sys.stderr, flush=True)
                else:
                    log.info("%s: %s; again in %.1f s", name, what, wait)
                await asyncio.sleep(wait)
                wait = min(2 * wait, LAST_WAIT)
    finally:  # the last progress line, ended: what the caller prints next starts a line of its own
        shown.line(force=True, end=True)
