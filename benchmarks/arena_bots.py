"""The remote bots of the arena benchmarks (``arena_speed.py``, ``arena_load.py``), in processes of their own, and the
machine a run's figures were taken on.

Both benchmarks run the server in their own process with a remote bot at every seat, and run the bots elsewhere: so
that the bots do not share the server's GIL and the server process's CPU time is the server's alone. One module, so
that the two measure with the same bots, started, waited for and counted the same way:

* ``bot_process``, one bot process: all its bots on one event loop (``train.arena.client.play_async``), each
  answering the first legal action (``"first"``: the cheapest bot, for the speed figures) or one drawn at random,
  seeded by its name (``"random"``: games with draws and tricks, not only passes, for the load test); its CPU seconds
  kept in shared memory; until a stop event or until it is ended, then, if asked, a JSON file of what each bot was told
  and answered;
* ``BotProcesses``: ``start`` them (``spawn``), ``wait_connected``, their ``cpu_seconds``, ``stop`` them and collect
  their files;
* ``seeded_secrets``: the matches' secrets drawn from a seed instead of the operating system, so that a run deals the
  same cards again (a server draws them from the operating system: its bots must not know them);
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py); the bot processes import this module too.
import preamble  # noqa: F401

# isort: split
import hashlib
import itertools
import json
import multiprocessing
import os
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from machine import cpu_seconds

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess
    from multiprocessing.synchronize import Event

    from train.arena.server import Arena

Moves = Literal["first", "random"]
"""How a bot answers a turn: its first legal action, or one drawn at random (seeded by its name)."""
CONNECT_SECONDS = 120.0
"""How long ``BotProcesses.wait_connected`` waits for every bot (a loaded machine starts processes slowly)."""
CPU_REFRESH_SECONDS = 0.02
"""How often a bot process writes its CPU seconds to shared memory."""


def bot_process(
    url: str,
    bots: Sequence[tuple[str, str]],
    cpu: Any,
    slot: int,
    moves: Moves = "first",
    seed: int = 0,
    stop: Event | None = None,
    out: str | None = None,
) -> None:
    """A bot process: every bot of ``bots`` (name, token) on one event loop, each answering as ``moves`` says, until
    ``stop`` is set (``None``: until the process is ended). ``cpu[slot]``: the process's CPU seconds, kept current.
    With ``out``, it writes there at the end what each bot was told (every ``deal_end``: match, deal, rotation), how
    many turns it answered, and each bot's error; without, a bot's error ends the process."""
    # here, not at the top: the arena extra is needed only where bots run, not for --help or a refused argument
    import asyncio
    import random

    from train.arena.client import Bot, play_async

    class Player(Bot):
        def __init__(self, name: str) -> None:
            # seeded by the name, not the process: the same moves however the bots are spread over processes
            self.rng = random.Random(f"{seed}:{name}") if moves == "random" else None
            self.moves = 0
            self.told: list[list[Any]] = []

        def act(self, turn: dict[str, Any]) -> int:
            self.moves += 1
            legal = turn["legal"]
            return int((legal[0] if self.rng is None else self.rng.choice(legal))["action"])

        def on_message(self, message: dict[str, Any]) -> None:
            if message["type"] == "deal_end":
                self.told.append([message["match"], message["deal"], message["rotation"]])

    async def all_bots() -> None:
        players = {name: Player(name) for name, _ in bots}
        tasks = {
            name: asyncio.create_task(play_async(players[name], url, name, token, reconnect=False))
            for name, token in bots
        }
        while stop is None or not stop.is_set():
            cpu[slot] = cpu_seconds(resource.RUSAGE_SELF)
            if out is None:
                # no file to report it in: the process ends, which the parent sees (a dead bot process)
                for task in tasks.values():
                    if task.done() and (error := task.exception()) is not None:
                        raise error
            await asyncio.sleep(CPU_REFRESH_SECONDS)
        cpu[slot] = cpu_seconds(resource.RUSAGE_SELF)
        errors = {name: repr(task.exception()) for name, task in tasks.items() if task.done() and task.exception()}
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        if out is not None:
            told = {name: {"moves": p.moves, "told": p.told} for name, p in players.items()}
            Path(out).write_text(json.dumps({"bots": told, "errors": errors}))

    asyncio.run(all_bots())


@dataclass
class BotProcesses:
    """Bot processes (``bot_process``), made by ``start``: the processes, their CPU seconds (``cpu``, one slot each),
    the event that stops them, the files they write at their end (``None``: none), and how many bots they hold."""

    workers: list[BaseProcess]
    cpu: Any
    event: Event
    outs: list[str] | None
    count: int

    @classmethod
    def start(
        cls,
        url: str,
        bots: Sequence[tuple[str, str]],
        processes: int,
        moves: Moves = "first",
        seed: int = 0,
        folder: str | None = None,
    ) -> BotProcesses:
        """``bots`` (name, token) spread over ``processes`` processes, dealt in turn, connecting to ``url``; with
        ``folder``, each writes there (``bots<p>.json``) what its bots were told and answered, once stopped."""
        context = multiprocessing.get_context("spawn")  # the server's threads are running: no fork
        cpu, event = context.Array("d", processes, lock=False), context.Event()
        outs = None if folder is None else [os.path.join(folder, f"bots{p}.json") for p in range(processes)]
        workers: list[BaseProcess] = [
            context.Process(
                target=bot_process,
                args=(url, bots[p::processes], cpu, p, moves, seed, event, None if outs is None else outs[p]),
                daemon=True,
            )
            for p in range(processes)
        ]
        for worker in workers:
            worker.start()
        return cls(workers, cpu, event, outs, len(bots))

    def wait_connected(self, arena: Arena, seconds: float = CONNECT_SECONDS) -> int:
        """Wait until ``arena`` holds every bot; how many it holds. RuntimeError after ``seconds``, or at once when a
        bot process has ended (a bot refused or its connection lost: it would never come)."""
        deadline = time.monotonic() + seconds
        while len(arena.registry.connected()) < self.count:
            if time.monotonic() > deadline or not all(w.is_alive() for w in self.workers):
                raise RuntimeError(f"{len(arena.registry.connected())} of {self.count} bots connected")
            time.sleep(0.05)
        return len(arena.registry.connected())

    def cpu_seconds(self) -> float:
        """The bot processes' CPU seconds so far, once they are idle: after a wait of five refreshes, so that each
        slot holds the last of their work."""
        time.sleep(5 * CPU_REFRESH_SECONDS)
        return float(sum(self.cpu))

    def stop(self) -> tuple[dict[str, Any], dict[str, str]]:
        """Stop the processes; what each bot was told and answered (``moves``, ``told``) and the bots' errors, by
        name (empty without files). Without files they are ended at once: a clean exit (closing every socket, the
        interpreter's shutdown) costs some 60 ms of CPU a process, which would count in the children's CPU time that
        ``arena_speed`` reports. With files, the event stops them, and force only after 60 s."""
        if self.outs is None:
            for worker in self.workers:
                worker.terminate()
        else:
            self.event.set()
        for worker in self.workers:
            worker.join(60)
            if worker.is_alive():
                worker.terminate()
                worker.join(10)
        bots: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for p, out in enumerate(self.outs or []):
            try:
                data = json.loads(Path(out).read_text())
            except (OSError, ValueError) as err:
                errors[f"process {p}"] = f"wrote no results ({err})"
                continue
            bots.update(data["bots"])
            errors.update(data["errors"])
        return bots, errors


def seeded_secrets(seed: int) -> Callable[[], str]:
    """``Arena.draw_secret`` for a benchmark: the ``i``-th match's secret is SHA-256(``bench:SEED:i``), so that a run
    with the same seed plays the same deals."""
    counter = itertools.count()
    return lambda: hashlib.sha256(f"bench:{seed}:{next(counter)}".encode()).hexdigest()
