"""Throughput and latency of the arena server (``train/arena``) with remote bots over real WebSockets.

What is measured
----------------
The server runs in this process (``train.arena.in_thread.serve_in_thread``: uvicorn on 127.0.0.1, an ephemeral port,
a temporary data folder); every seat of every match is a remote bot (no built-in agent sits at a table), a
``train.arena.client.Bot`` that answers each turn with its first legal action (a pass: one decision a seat a game),
or with ``--moves random`` a seeded random one (games of tricks). The bots run in ``--bot-processes``
processes of their own (all the bots of a process on one event loop, ``train.arena.client.play_async``;
``benchmarks/arena_bots.py``), so that the server's figures are not the client's GIL and the server process's CPU time
is the server's alone. The matches are
asked for over HTTP, ``POST /api/matches`` with an operator token, 1 then 16 at once by default, ``--deals`` deals
each at ``--players`` seats, each deal played once (the arena's format for remote seats), each match dealt from a
secret drawn from ``--seed``. No par game is played unless ``--par SPEC`` asks for one: the par games are the
server's own work per deal (``SPEC`` in every seat), apart from the remote decisions measured here.

* remote decisions/s: the turns the bots answered, over the wall time of the matches running at once;
* round trip per move, p50 and p99: from the table asking for the turn (before the message is encoded and queued
  for the socket) to the event loop receiving the bot's action for it (``Connection.expect`` to
  ``Connection.answer``, timed in the server by wrapping them): the network, the bot and the server's own queueing;
* server CPU per decision: ``resource.getrusage`` of this process (user + system) over the run, divided by the
  decisions;
* bot CPU per decision: the bot processes' own CPU time (user + system) over the run, divided by the decisions
  (each process keeps its figure in shared memory, refreshed every 20 ms; read after the run, once they are idle);
  server and bots together is what the 2-core budget pays: 2 cores / 2,000 decisions/s = 1,000 us a decision.

Before the timed runs an untimed match warms up the compiled game code and the connections. The machine is shared
by server and bots: on two cores the figures are those of the pair.

Usage
-----
::

    python benchmarks/arena_speed.py                     # 1 then 16 tables, 5 seats, 20 deals each (under a minute)
    python benchmarks/arena_speed.py --quick --json r.json   # 1 then 2 tables, 3 deals, 3 seats (a test's)
    python benchmarks/arena_speed.py --stub-turns        # turns without their view: the turns' share of the CPU
    python benchmarks/arena_speed.py --loop asyncio      # the server on asyncio's own loop, as where uvloop is missing

``benchmarks/arena_floor.py`` times the server's own pieces of a decision (the game and its hand history, a turn)
without the network, beside the rules core's floor.

The issue's target on a 2-core machine: at least 2,000 remote decisions/s at 16 tables, with p99 under 50 ms.
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import json
import resource
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from arena_bots import BotProcesses, seeded_secrets
from machine import cpu_seconds, machine_info, machine_line

LOOPS = ("auto", "asyncio", "uvloop")
"""``--loop``: the server's event loop."""
TARGET_RATE = 2000.0
"""Remote decisions/s at 16 tables the issue asks for (server and bots on one 2-core machine)."""
TARGET_P99_MS = 50.0
"""Round trip per move, 99th percentile, the issue asks for."""


class RoundTrips:
    """Times each turn from ``Connection.expect`` (the table asks) to ``Connection.answer`` (the action is in)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.asked: dict[tuple[int, int], float] = {}
        self.seconds: list[float] = []

    def install(self) -> None:
        from train.arena import remote

        expect, answer = remote.Connection.expect, remote.Connection.answer

        def timed_expect(connection: remote.Connection, turn: int) -> Any:
            with self.lock:
                self.asked[(id(connection), turn)] = time.perf_counter()
            return expect(connection, turn)

        def timed_answer(connection: remote.Connection, action: Any) -> bool:
            answered = answer(connection, action)
            now = time.perf_counter()
            with self.lock:
                asked = self.asked.pop((id(connection), action.turn), None)
                if answered and asked is not None:
                    self.seconds.append(now - asked)
            return answered

        # on the class: the server builds its connections itself, and they all share these two methods
        setattr(remote.Connection, "expect", timed_expect)  # noqa: B010
        setattr(remote.Connection, "answer", timed_answer)  # noqa: B010

    def take(self) -> list[float]:
        with self.lock:
            out, self.seconds = self.seconds, []
            self.asked.clear()
            return out


def ask(port: int, operator: str, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /api/matches``: the match's answer (its report and text)."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/matches",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {operator}"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=600) as answer:
        result: dict[str, Any] = json.loads(answer.read())
    return result


def run_tables(
    port: int,
    operator: str,
    bots: list[str],
    tables: int,
    args: argparse.Namespace,
    trips: RoundTrips,
    fleet: BotProcesses,
) -> dict[str, Any]:
    """``tables`` matches at once, every seat a remote bot of ``fleet``; their figures."""
    bodies = [
        {
            "seats": [f"bot:{name}" for name in bots[t * args.players : (t + 1) * args.players]],
            "deals": args.deals,
            "clock": args.clock,
            "par": args.par,
        }
        for t in range(tables)
    ]
    trips.take()
    bots0 = fleet.cpu_seconds()
    cpu0, wall0 = cpu_seconds(resource.RUSAGE_SELF), time.perf_counter()
    with ThreadPoolExecutor(tables) as pool:
        reports = [answer["report"] for answer in pool.map(lambda body: ask(port, operator, body), bodies)]
    wall, cpu = time.perf_counter() - wall0, cpu_seconds(resource.RUSAGE_SELF) - cpu0
    bots_cpu = fleet.cpu_seconds() - bots0
    rtt = np.array(trips.take()) * 1000
    counts = [r["counts"] for report in reports for r in report["results"] if r["counts"] is not None]
    decisions = sum(c["decisions"] for c in counts)
    fallbacks = sum(c["fallbacks"] for c in counts)
    answered = decisions - fallbacks
    return {
        "tables": tables,
        "players": args.players,
        "deals": args.deals,
        "statuses": sorted({report["status"] for report in reports}),
        "decisions": decisions,
        "fallbacks": fallbacks,
        "disconnects": sum(c["disconnects"] for c in counts),
        "round_trips": int(rtt.size),
        "seconds": wall,
        "decisions_per_second": answered / wall,
        "round_trip_ms_p50": float(np.percentile(rtt, 50)) if rtt.size else None,
        "round_trip_ms_p99": float(np.percentile(rtt, 99)) if rtt.size else None,
        "round_trip_ms_max": float(rtt.max()) if rtt.size else None,
        "server_cpu_seconds": cpu,
        "server_cpu_us_per_decision": 1e6 * cpu / decisions if decisions else None,
        "bots_cpu_seconds": bots_cpu,
        "bots_cpu_us_per_decision": 1e6 * bots_cpu / decisions if decisions else None,
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--tables",
        type=int,
        nargs="+",
        default=[1, 16],
        help="matches played at once, one run per value (default: 1 16)",
    )
    parser.add_argument("--players", type=int, default=5, help="seats of each match, every one a bot (default: 5)")
    parser.add_argument(
        "--deals",
        type=int,
        default=20,
        help="deals of each match, each played once (default: 20)",
    )
    parser.add_argument(
        "--par",
        default="none",
        metavar="SPEC",
        help="the agent of the par games the server plays beside each deal; none: no par game (default: none)",
    )
    parser.add_argument(
        "--stub-turns",
        action="store_true",
        help="send each turn with an empty view and its first legal action alone (the bots play it): the server's "
        "CPU a decision without building the turns, for their share",
    )
    parser.add_argument(
        "--clock",
        type=float,
        default=10.0,
        help="seconds a bot has per move; long, so a slow machine shows as latency, not as fallbacks (default: 10)",
    )
    parser.add_argument(
        "--bot-processes", type=int, default=4, help="processes the bots are spread over (threads inside; default: 4)"
    )
    parser.add_argument(
        "--moves",
        choices=("first", "random"),
        default="first",
        help="the bots' moves: first, the first legal action (every seat passes: a game is one decision a seat); "
        "random, seeded by --seed and the bot's name (seats stay and play tricks, as a bot that plays does: a game "
        "is some 4 times as many decisions, its own costs shared among them) (default: first)",
    )
    parser.add_argument(
        "--loop",
        choices=LOOPS,
        default="auto",
        help="the server's event loop: uvloop (libuv's, in C), asyncio (the standard library's, as on a platform "
        "without uvloop's wheels), auto: uvloop where it is installed, as bourre arena serve (default: auto)",
    )
    parser.add_argument(
        "--json-codec",
        choices=("today", "msgspec"),
        default="today",
        help="the JSON of the messages: today's (orjson writes, a regular expression or the standard library reads); "
        "msgspec, its typed decoder reading actions first and its encoder writing every message, a trial of the "
        "benchmark's alone (it takes a key given twice, which the protocol refuses) (default: today)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the matches' secrets (default 0)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a short run for a test: 1 then 2 tables of 3 seats, 3 deals, 2 bot processes",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if args.quick:
        args.tables, args.players, args.deals, args.bot_processes = [1, 2], 3, 3, 2
    if min(args.tables) < 1 or max(args.tables) > 32:
        parser.error("--tables: expected values in 1..32 (the server's MAX_MATCHES)")
    if not 2 <= args.players <= 8:
        parser.error("--players: expected 2..8")
    if not 1 <= args.deals <= 1000:
        parser.error("--deals: expected 1..1000")
    if not 0.001 <= args.clock <= 60:
        parser.error("--clock: expected seconds in 0.001..60")
    if args.bot_processes < 1:
        parser.error("--bot-processes: expected at least 1")
    if args.json_codec == "msgspec":
        try:
            import msgspec  # noqa: F401
        except ImportError:
            parser.error("--json-codec msgspec: msgspec is not installed (pip install msgspec)")
    if args.loop == "uvloop" and not uvloop_installed():
        parser.error("--loop uvloop: uvloop is not installed (pip install uvloop; it has no wheels for Windows)")
    return args


def uvloop_installed() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def msgspec_codec() -> None:
    """``--json-codec msgspec``: actions read by msgspec's typed decoder (what it refuses goes to today's reader, which
    words the fault), every message written by its encoder."""
    from typing import Literal

    import msgspec

    from train.arena import protocol

    # made, not declared: this module's annotations are strings, which msgspec would look up in its globals
    fields = [("type", Literal["action"]), ("turn", int), ("action", int)]
    action_type = msgspec.defstruct("Action", fields, forbid_unknown_fields=True)
    decoder, encoder = msgspec.json.Decoder(action_type), msgspec.json.Encoder()
    parse = protocol.parse_client

    def parse_client(data: str | bytes) -> protocol.Hello | protocol.Action:
        if len(data) <= protocol.MAX_MESSAGE_BYTES:
            try:
                action = decoder.decode(data)
            except (msgspec.ValidationError, msgspec.DecodeError):
                pass
            else:
                if 0 <= action.turn < 2**53 and 0 <= action.action < 2**53:
                    return protocol.Action(action.turn, action.action)
        return parse(data)

    protocol.parse_client = parse_client  # type: ignore[assignment]
    protocol.encode = lambda message: encoder.encode(message).decode()  # type: ignore[assignment]


def stub_turns() -> None:
    """``--stub-turns``: every turn the server sends is its head, an empty view and its first legal action alone."""
    from train.arena import protocol

    def turn_from_view(
        seen: tuple[Any, Any], *, match: str, number: int, deal: int, seat: int, clock_ms: int, **_: Any
    ) -> dict[str, Any]:
        return {
            "type": "turn",
            "match": match,
            "turn": number,
            "deal": deal,
            "seat": seat,
            "clock_ms": clock_ms,
            "view": {},
            "legal": [{"action": int(seen[1].nonzero()[0][0])}],  # seen: (observation, legal mask)
        }

    protocol.turn_from_view = turn_from_view  # type: ignore[assignment]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from train.arena.in_thread import serve_in_thread
    from train.arena.server import Arena
    from train.arena.storage import Store
    from train.web import connections

    machine = machine_info()
    header = (
        f"{machine_line(machine)}; server in this process, {args.bot_processes} bot processes; "
        f"{args.players} seats a match, all remote bots ({args.moves} moves), {args.deals} deal(s) each played "
        f"once, par games: {args.par}, clock {args.clock:g} s"
    )
    print(header, flush=True)
    trips = RoundTrips()
    trips.install()
    if args.stub_turns:
        stub_turns()
    if args.json_codec == "msgspec":
        msgspec_codec()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="arena-speed-") as data:
        store = Store(data)
        operator = store.add_operator("benchmark")
        arena = Arena(store)
        arena.draw_secret = seeded_secrets(args.seed)  # the matches' deals, the same in every run
        # bots and match requests all come from the loopback: one address may hold every connection
        loopback = connections.Guard(per_address=connections.MAX_CONNECTIONS)
        server, port = serve_in_thread(arena, guard=loopback, loop=args.loop)
        loop_class = type(server.servers[0].get_loop())
        event_loop = f"{loop_class.__module__}.{loop_class.__qualname__}"
        print(f"the server's event loop: {event_loop}", flush=True)
        bots = [(f"b{i}", store.add_bot(f"b{i}")) for i in range(max(args.tables) * args.players)]
        names = [name for name, _ in bots]
        fleet = BotProcesses.start(
            f"ws://127.0.0.1:{port}/bot", bots, args.bot_processes, moves=args.moves, seed=args.seed
        )
        try:
            fleet.wait_connected(arena)
            # a match of its own (every match has its own secret): the timed runs find none of its hands in the caches
            warm = argparse.Namespace(**{**vars(args), "deals": 1})
            run_tables(port, operator, names, 1, warm, trips, fleet)  # untimed: compiled code, caches, the first sends
            for tables in args.tables:
                print(f"[{tables} table(s)] ...", file=sys.stderr, flush=True)
                results.append(run_tables(port, operator, names, tables, args, trips, fleet))
        finally:
            fleet.stop()
            server.stop()
            store.close()
    bots_cpu = cpu_seconds(resource.RUSAGE_CHILDREN)  # the processes are stopped and waited for: theirs in full
    print(
        f"{'tables':>6} {'decisions':>9} {'fallbacks':>9} {'seconds':>7} {'decisions/s':>11} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'CPU us/decision: server':>23} {'bots':>6}"
    )
    for r in results:
        p50, p99, top = (
            r[k] if r[k] is not None else float("nan")
            for k in ("round_trip_ms_p50", "round_trip_ms_p99", "round_trip_ms_max")
        )
        print(
            f"{r['tables']:>6} {r['decisions']:>9} {r['fallbacks']:>9} {r['seconds']:>7.2f} "
            f"{r['decisions_per_second']:>11,.0f} {p50:>7.2f} {p99:>7.2f} {top:>7.2f} "
            f"{r['server_cpu_us_per_decision'] or float('nan'):>23,.0f} "
            f"{r['bots_cpu_us_per_decision'] or float('nan'):>6,.0f}"
        )
    print(
        f"bot processes: {bots_cpu:.1f} CPU s in all (start-up and warm-up included); target at 16 tables: "
        f">= {TARGET_RATE:,.0f} decisions/s with p99 < {TARGET_P99_MS:g} ms"
    )
    if args.json:
        from bourre_env import atomic_files

        payload = {
            "config": {
                k: getattr(args, k)
                for k in (
                    "tables",
                    "players",
                    "deals",
                    "par",
                    "clock",
                    "bot_processes",
                    "seed",
                    "quick",
                    "stub_turns",
                    "moves",
                    "loop",
                    "json_codec",
                )
            },
            "event_loop": event_loop,
            "machine": machine,
            "targets": {"decisions_per_second": TARGET_RATE, "round_trip_ms_p99": TARGET_P99_MS},
            "bots_cpu_seconds": bots_cpu,
            "results": results,
        }
        atomic_files.write_text(args.json, json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
