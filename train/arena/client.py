"""A remote bot in Python: subclass ``Bot``, return an action id from ``act``, and ``play`` it against a server.

```python
from train.arena.client import Bot, play

class FirstLegal(Bot):
    def act(self, turn):
        return turn["legal"][0]["action"]

play(FirstLegal(), "ws://127.0.0.1:8765/bot", "alice", open("alice.token").read().strip())
```

This module needs the ``websockets`` package and nothing of the project's agents; ``AgentBot`` plays any
``agents.make`` spec (importing the agents only when it is built). ``play`` reconnects after a lost connection (the
server gives the seat back to a bot that returns within its grace period, and a restarted server takes the bot back
as soon as it listens again) and stops for good when the server refuses the bot (a wrong token, another protocol
version). ``play_async`` is the same loop as a coroutine, so that one process can run many bots on one event loop.

``act`` runs on the connection's event loop: a bot whose ``act`` may take long (a search, a model) sets
``in_thread``, and ``act`` runs in a worker thread instead, so that the connection's keepalive is answered meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["AgentBot", "Bot", "RefusedError", "play", "play_async"]

PROTOCOL_VERSION = 1


class RefusedError(RuntimeError):
    """The server closed the connection with a fatal error: retrying would be refused again."""


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

    def act(self, turn: dict[str, Any]) -> int:
        import numpy as np

        from bourre_env import core

        mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
        mask[[entry["action"] for entry in turn["legal"]]] = 1
        observation = {"observation": np.asarray(turn["observation"], dtype=np.float32), "action_mask": mask}
        return int(self.agent.act(observation))  # type: ignore[arg-type]

    def on_message(self, message: dict[str, Any]) -> None:
        reset = getattr(self.agent, "reset", None)
        if message["type"] == "deal_start" and callable(reset):
            reset()


class _Progress:
    def __init__(self, name: str, show: bool) -> None:
        self.name, self.show = name, show
        self.moves = self.deals = self.errors = 0
        self.last = 0.0

    def line(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.show and (force or now - self.last > 1.0):
            self.last = now
            print(f"\r{self.name}: {self.moves} moves, {self.deals} games, {self.errors} errors", end="",
                  file=sys.stderr, flush=True)  # fmt: skip


def play(
    bot: Bot,
    url: str,
    name: str,
    token: str,
    reconnect: bool = True,
    progress: bool = False,
    until: Callable[[dict[str, Any]], bool] | None = None,
) -> None:
    """Play ``bot`` as ``name`` until ``until(message)`` says so (``None``: for ever), reconnecting after a lost
    connection when ``reconnect``; ``RefusedError`` when the server refuses the bot."""
    asyncio.run(play_async(bot, url, name, token, reconnect, progress, until))


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
    from websockets.exceptions import ConnectionClosed

    shown = _Progress(name, progress)
    wait = 0.2
    hello = json.dumps({"type": "hello", "protocol": PROTOCOL_VERSION, "name": name, "token": token,
                        "observation": bot.observation, "words": bot.words})  # fmt: skip
    while True:
        try:
            async with connect(url, max_size=2**22, open_timeout=10, compression=None) as ws:
                await ws.send(hello)
                welcome = json.loads(await ws.recv())
                if welcome["type"] != "welcome":
                    raise RefusedError(welcome.get("message", str(welcome)))
                wait = 0.2
                async for text in ws:
                    message = json.loads(text)
                    if message["type"] == "turn":
                        action = await asyncio.to_thread(bot.act, message) if bot.in_thread else bot.act(message)
                        await ws.send(f'{{"type":"action","turn":{int(message["turn"])},"action":{int(action)}}}')
                        shown.moves += 1
                    else:
                        if message["type"] == "deal_end":
                            shown.deals += 1
                        elif message["type"] == "error":
                            shown.errors += 1
                            if message["fatal"]:
                                raise RefusedError(message["message"])
                        bot.on_message(message)
                        if until is not None and until(message):
                            return
                    shown.line()
                raise ConnectionError("the server closed the connection")
        except (ConnectionClosed, OSError, TimeoutError, asyncio.TimeoutError) as err:
            if not reconnect:
                raise ConnectionError(f"connection to {url} lost: {err}") from None
            if progress:
                print(f"\n{name}: connection lost ({err}); again in {wait:.1f} s", file=sys.stderr, flush=True)
            await asyncio.sleep(wait)
            wait = min(2 * wait, 5.0)
        finally:
            shown.line(force=True)
