"""Does one table of search agents stall the arena's other tables? Round trips of remote bots, with and without it.

What is measured
----------------
The server runs in this process (``train.arena.in_thread.serve_in_thread``, a temporary data folder), with ``--tables``
matches of remote bots (every seat a bot answering its first legal action, in ``--bot-processes`` processes of their
own: ``benchmarks/arena_bots.py``), asked for over HTTP as ``benchmarks/arena_speed.py`` asks. Their round trip per
move (the table asking for a turn to the event loop receiving the answer: ``arena_speed.RoundTrips``) is taken in
three runs:

* ``none``: the bots' tables alone;
* ``thread``: beside them, one more table on the server's event loop seating ``--heavy`` (``pimc:16``) in every seat,
  its agents built by ``train.eval.duplicate.build_agent`` and played by ``train.arena.match.play_game``, which
  chooses a built-in agent's move in a thread of the server's process: what ``play_match`` and the ladder's all-field
  tables (``scheduler.play_baselines``) do today;
* ``process``: the same table, its agents built by ``train.arena.thinking.build_seat`` (a ``SeatProxy`` each: the
  agent in a worker process) and played by the same, unchanged ``play_game``: its thread now waits on the worker,
  the GIL free. Once ``match.py`` awaits ``SeatProxy.act_async`` on the loop, the thread hop goes too.

The heavy table plays deal after deal (its first move made before the timing starts, so that the compiled code is
loaded) until the bots' matches are over, then it is cancelled; its moves during the timed window are counted, to
show it was thinking all along. The machine is shared by the server, its worker, and the bots: on two cores the
figures are those of all of them together.

Usage
-----
::

    python benchmarks/arena_heavy_seat.py                 # 3 tables of 3 bots, 3 deals each; pimc:16 (minutes)
    python benchmarks/arena_heavy_seat.py --quick --json r.json   # 1 table, 1 deal, pimc:2 (a test's)
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
from arena_bots import BotProcesses, seeded_secrets
from arena_speed import RoundTrips, ask
from machine import machine_info, machine_line

MODES = ("none", "thread", "process")


async def heavy_table(mode: str, spec: str, players: int, seed: int, moves: list[int]) -> None:
    """Deal after deal of ``spec`` in every seat, until cancelled; ``moves[0]`` counts the decisions made."""
    import bourre_env
    from train.arena import match, thinking
    from train.eval.duplicate import agent_seed, build_agent, make_deals, table_rules

    build = thinking.build_seat if mode == "process" else build_agent
    table = [build(spec, agent_seed(seed, players, 0, 1 + s)) for s in range(players)]
    counted = [_Counted(agent, moves) for agent in table]
    deals = make_deals(seed, table_rules(players, {}), 64)
    env = bourre_env.env(num_players=players)
    try:
        for k in range(10**6):
            await match.play_game(env, counted, deals, k % 64, [spec] * players, f"heavy deal {k}")
    finally:
        for agent in table:
            close = getattr(agent, "close", None)
            if callable(close):
                close()


class _Counted:
    """An agent whose moves are counted (``play_game`` resets it and calls ``act`` in a thread)."""

    def __init__(self, agent: Any, moves: list[int]) -> None:
        self.agent, self.moves = agent, moves

    def reset(self) -> None:
        self.agent.reset()

    def act(self, observation: Any) -> int:
        action = int(self.agent.act(observation))
        self.moves[0] += 1
        return action


def run(
    mode: str,
    loop: asyncio.AbstractEventLoop,
    port: int,
    operator: str,
    names: list[str],
    args: argparse.Namespace,
    trips: RoundTrips,
) -> dict[str, Any]:
    """One run: the bots' tables, beside the heavy table of ``mode`` (none, thread or process); their figures."""
    moves = [0]
    heavy: Future[None] | None = None
    if mode != "none":
        heavy = asyncio.run_coroutine_threadsafe(heavy_table(mode, args.heavy, args.players, args.seed, moves), loop)
        deadline = time.monotonic() + 600
        while moves[0] == 0:  # its compiled code loaded, its worker started and warm
            if heavy.done():
                heavy.result()  # its error, if it failed
            if time.monotonic() > deadline:
                raise RuntimeError("the heavy table made no move within 600 s")
            time.sleep(0.05)
    bodies = [
        {
            "seats": [f"bot:{name}" for name in names[t * args.players : (t + 1) * args.players]],
            "deals": args.deals,
            "clock": 30.0,
            "par": "none",  # the bots' tables alone: the heavy table is the one under test
        }
        for t in range(args.tables)
    ]
    trips.take()
    moves0, wall0 = moves[0], time.perf_counter()
    try:
        with ThreadPoolExecutor(args.tables) as pool:
            reports = [answer["report"] for answer in pool.map(lambda body: ask(port, operator, body), bodies)]
    finally:
        wall = time.perf_counter() - wall0
        heavy_moves = moves[0] - moves0
        if heavy is not None:
            heavy.cancel()
    rtt = np.array(trips.take()) * 1000
    counts = [r["counts"] for report in reports for r in report["results"] if r["counts"] is not None]
    decisions = sum(c["decisions"] for c in counts)
    return {
        "mode": mode,
        "tables": args.tables,
        "statuses": sorted({report["status"] for report in reports}),
        "decisions": decisions,
        "fallbacks": sum(c["fallbacks"] for c in counts),
        "seconds": wall,
        "decisions_per_second": decisions / wall,
        "heavy_moves": heavy_moves,
        "round_trips": int(rtt.size),
        "round_trip_ms_p50": float(np.percentile(rtt, 50)) if rtt.size else None,
        "round_trip_ms_p99": float(np.percentile(rtt, 99)) if rtt.size else None,
        "round_trip_ms_max": float(rtt.max()) if rtt.size else None,
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tables", type=int, default=3, help="matches of remote bots at once (default: 3)")
    parser.add_argument("--players", type=int, default=3, help="seats of every table, heavy one included (default: 3)")
    parser.add_argument("--deals", type=int, default=9, help="deals of each bots' match, each once (default: 9)")
    parser.add_argument("--heavy", default="pimc:16", help="the heavy table's agent, in every seat (default: pimc:16)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES), help="runs, in order (default: all)")
    parser.add_argument("--bot-processes", type=int, default=2, help="processes of the bots (default: 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the secrets and the heavy table (default: 0)")
    parser.add_argument("--quick", action="store_true", help="a test's run: 1 table, 1 deal, pimc:2")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if args.quick:
        args.tables, args.deals, args.heavy = 1, 1, "pimc:2"
    if not 1 <= args.tables <= 16:
        parser.error("--tables: expected 1..16")
    if not 2 <= args.players <= 8:
        parser.error("--players: expected 2..8")
    if not 1 <= args.deals <= 100:
        parser.error("--deals: expected 1..100")
    if args.bot_processes < 1:
        parser.error("--bot-processes: expected at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from train.arena import thinking
    from train.arena.in_thread import serve_in_thread
    from train.arena.server import Arena
    from train.arena.storage import Store
    from train.web import connections

    machine = machine_info()
    print(
        f"{machine_line(machine)}; server in this process, {args.bot_processes} bot processes, "
        f"{thinking.workers()} worker process(es) for heavy seats; {args.tables} table(s) of {args.players} remote "
        f"bots (first legal action), {args.deals} deal(s) each played once; heavy table: {args.heavy}",
        flush=True,
    )
    trips = RoundTrips()
    trips.install()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="arena-heavy-") as data:
        store = Store(data)
        operator = store.add_operator("benchmark")
        arena = Arena(store)
        arena.draw_secret = seeded_secrets(args.seed)  # every match its own deals, the same in every run
        # bots and match requests all come from the loopback: one address may hold every connection
        loopback = connections.Guard(per_address=connections.MAX_CONNECTIONS)
        server, port = serve_in_thread(arena, guard=loopback)
        loop = server.servers[0].get_loop()
        bots = [(f"b{i}", store.add_bot(f"b{i}")) for i in range(args.tables * args.players)]
        names = [name for name, _ in bots]
        fleet = BotProcesses.start(f"ws://127.0.0.1:{port}/bot", bots, args.bot_processes, moves="first")
        try:
            fleet.wait_connected(arena)
            warm = argparse.Namespace(**{**vars(args), "deals": 1})
            run("none", loop, port, operator, names, warm, trips)  # untimed: the game's code, the connections
            for mode in args.modes:
                print(f"[{mode}] ...", file=sys.stderr, flush=True)
                results.append(run(mode, loop, port, operator, names, args, trips))
        finally:
            fleet.stop()
            server.stop()
            store.close()
            thinking.shutdown()
    print(
        f"{'heavy table':>12} {'decisions':>9} {'seconds':>7} {'dec/s':>6} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'max ms':>7} {'heavy moves':>11}"
    )
    for r in results:
        p50, p99, top = (
            r[k] if r[k] is not None else float("nan")
            for k in ("round_trip_ms_p50", "round_trip_ms_p99", "round_trip_ms_max")
        )
        print(
            f"{r['mode']:>12} {r['decisions']:>9} {r['seconds']:>7.2f} {r['decisions_per_second']:>6.0f} "
            f"{p50:>7.2f} {p99:>7.2f} {top:>7.2f} {r['heavy_moves']:>11}"
        )
    if args.json:
        from bourre_env import atomic_files

        keys = ("tables", "players", "deals", "heavy", "modes", "bot_processes", "seed", "quick")
        payload = {"config": {k: getattr(args, k) for k in keys}, "machine": machine, "results": results}
        atomic_files.write_text(args.json, json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
