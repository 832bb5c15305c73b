"""A bot written from docs/protocol.md alone, with the ``websockets`` client library and nothing of this project, for
``benchmarks/arena_outside.py`` (the same bot as ``arena_outside_bot.js``): it answers each turn, THINK_MS after it
came (0: at once), with a random legal action (seeded by SEED and its name) or with the first, and at each match's
end appends one JSON line to LOG_FILE:
the match, and each of its turns as ``[turn, deal, received ns, answered ns]`` on the machine's monotonic clock
(``CLOCK_MONOTONIC``, which the other bots' processes read too).

    python arena_outside_bot.py URL NAME TOKEN_FILE first|random SEED THINK_MS LOG_FILE [LOCAL_ADDRESS]
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed


async def play(
    url: str, name: str, token: str, moves: str, seed: str, think: float, log: Path, local: str | None
) -> None:
    draw = random.Random(f"{seed}:{name}")
    turns: dict[str, list[list[int]]] = {}
    options = {"local_addr": (local, 0)} if local else {}
    async with connect(url, **options) as ws:  # type: ignore[arg-type]
        await ws.send(json.dumps({"type": "hello", "protocol": 1, "name": name, "token": token}))
        async for data in ws:
            received = time.monotonic_ns()
            message = json.loads(data)
            kind = message.get("type")
            if kind == "turn":
                legal = message["legal"]
                action = legal[draw.randrange(len(legal)) if moves == "random" else 0]["action"]
                if think > 0:
                    await asyncio.sleep(think / 1000)
                answered = time.monotonic_ns()  # before the send: a turn that follows it comes after this
                await ws.send(json.dumps({"type": "action", "turn": message["turn"], "action": action}))
                turns.setdefault(message["match"], []).append([message["turn"], message["deal"], received, answered])
            elif kind == "match_end":
                line = {"match": message["match"], "bot": name, "status": message["status"]}
                line["turns"] = turns.pop(message["match"], [])
                with log.open("a") as out:
                    out.write(json.dumps(line) + "\n")
            elif kind == "error":
                print(f"{name}: {message.get('message')}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    if len(argv) not in (7, 8) or argv[3] not in ("first", "random"):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    url, name, token_file, moves, seed, think, log = argv[:7]
    token = Path(token_file).read_text().strip()
    local = argv[7] if len(argv) == 8 else None
    try:
        asyncio.run(play(url, name, token, moves, seed, float(think), Path(log), local))
    except KeyboardInterrupt:
        return 0
    except (OSError, ConnectionClosed) as err:
        print(f"{name}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
