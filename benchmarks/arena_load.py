"""A load test of the arena server (``train/arena``): many remote bots at many tables at once, bounded in decisions
and in time, that fails on any game lost or doubled.

What is run
-----------
The server runs in this process, as in ``benchmarks/arena_speed.py`` (``train.arena.in_thread.serve_in_thread``:
uvicorn on 127.0.0.1, an ephemeral port, SQLite in a temporary data folder). ``--tables`` x ``--players`` bots (100
by default) connect from ``--bot-processes`` processes of their own (all the bots of a process on one event loop,
``train.arena.client.play_async``; ``benchmarks/arena_bots.py``); each answers a turn with a legal action drawn at
random (seeded by its name), so that games have draws and tricks, not only passes. Every table is a fixed group of
``--players`` bots that asks for one match after another (``POST /api/matches`` with an operator token, ``--deals``
deals each, each played once, no par game, each match dealt from its own secret, drawn from ``--seed`` so that a run
is the same again), all ``--tables`` at once, until the matches
answered hold ``--decisions`` decisions (no new match is asked after that, or after ``--max-seconds``; the matches under
way finish). One untimed match of one table comes first (the compiled game code, the connections).

What is reported
----------------
* decisions/s: the bots' answers over the wall time of the run; the peak and mean count of tables playing at once
  (``Arena.running``, sampled every 5 ms);
* round trip per move, p50 and p99 (and max): from the table asking for the turn to the event loop receiving the
  bot's action (``arena_speed.RoundTrips``);
* CPU per decision: the server process's (``getrusage``, user + system, over the run; this process also holds the
  HTTP requests of the tables, one per match) and the bot processes' (their own ``getrusage``, kept in shared memory);
* memory: the server process's resident set at the start and the end of the run, and its peak (``ru_maxrss``), and
  the largest bot process's peak.

What fails it (exit status 1, each problem on a line)
-----------------------------------------------------
After the run the bots stop and send what they were told, and the database is read back (``audit``): every match
asked for is stored ``finished`` and no other; every game of every match (each deal once) is stored
exactly once, none missing, none twice, none of a match not asked; each bot was told (``deal_end``) of exactly the
games of the matches it sat in, each once; the bots' answers are the stored reports' decisions less fallbacks; no
move fell back, no bot disconnected, no request failed.

Usage
-----
::

    python benchmarks/arena_load.py                        # 100 bots, 25 tables, 20,000 decisions (about a minute)
    python benchmarks/arena_load.py --quick --json r.json  # 24 bots, 6 tables, 2,000 decisions (a test's)
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
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from arena_bots import BotProcesses, seeded_secrets
from arena_speed import RoundTrips, ask
from machine import cpu_seconds, machine_info, machine_line

Game = tuple[str, int, int]
"""A game: (match id, deal, rotation)."""


def audit(
    asked: dict[str, list[str]],
    deals: dict[str, tuple[int, int]],
    statuses: dict[str, str],
    games: Iterable[Game],
    told: dict[str, list[Game]],
) -> dict[str, Any]:
    """Every game stored once and told once: ``asked``: each match asked for, its bots' names; ``deals``: its deals
    and seats (deal ``k`` is played once, in rotation ``k % seats``); ``statuses``: every match stored, its status;
    ``games``: every game stored; ``told``: each bot's ``deal_end`` messages. The counts of each kind of fault, and
    a line for each fault (at most 20 of a kind)."""
    problems: list[str] = []
    counts = Counter[str]()

    def fault(kind: str, line: str) -> None:
        counts[kind] += 1
        if counts[kind] <= 20:
            problems.append(line)

    for match in sorted(set(statuses) - set(asked)):
        fault("stray_matches", f"match {match}: stored, never asked for")
    for match in sorted(asked):
        if statuses.get(match) != "finished":
            fault("unfinished_matches", f"match {match}: {statuses.get(match, 'not stored')}, not finished")
    expected = {match: {(match, k, k % deals[match][1]) for k in range(deals[match][0])} for match in asked}
    stored = Counter(games)
    for (match, deal, rotation), n in sorted(stored.items()):
        if match not in asked:
            fault("stray_games", f"game {match}/{deal}/{rotation}: stored, of no match asked for")
        elif (match, deal, rotation) not in expected[match]:
            fault("stray_games", f"game {match}/{deal}/{rotation}: stored, past its match's deals and seats")
        elif n > 1:
            fault("doubled_games", f"game {match}/{deal}/{rotation}: stored {n} times")
    for match in sorted(asked):
        for game in sorted(g for g in expected[match] if g not in stored):
            fault("lost_games", f"game {'/'.join(map(str, game))}: never stored")
    seated: dict[str, set[Game]] = {}
    for match, names in asked.items():
        for name in names:
            seated.setdefault(name, set()).update(g for g in expected[match] if g in stored)
    for name in sorted(set(seated) | set(told)):
        heard = Counter(told.get(name, []))
        for game, n in sorted(heard.items()):
            if n > 1:
                fault("told_twice", f"bot {name}: told {n} times of game {'/'.join(map(str, game))}")
        for game in sorted(seated.get(name, set()) - set(heard)):
            fault("not_told", f"bot {name}: not told of game {'/'.join(map(str, game))}, stored for it")
        for game in sorted(set(heard) - seated.get(name, set())):
            fault("told_not_stored", f"bot {name}: told of game {'/'.join(map(str, game))}, not stored for it")
    return {
        "matches": len(asked),
        "games_stored": sum(stored.values()),
        "games_expected": sum(len(e) for e in expected.values()),
        "faults": dict(counts),
        "problems": problems,
    }


def read_back(store: Any) -> tuple[dict[str, str], list[Game]]:
    """Every match's status and every game's key, from the database."""
    import sqlalchemy as sa

    from train.arena.storage import games, matches

    with store.engine.connect() as db:
        statuses = {r.id: r.status for r in db.execute(sa.select(matches.c.id, matches.c.status))}
        keys = [
            (r.match_id, r.deal, r.rotation)
            for r in db.execute(sa.select(games.c.match_id, games.c.deal, games.c.rotation))
        ]
    return statuses, keys


def rss_mib() -> float | None:
    """This process's resident set now, MiB (Linux), else None."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


class Tables:
    """``tables`` groups of bots, each asking for one match after another until ``target`` decisions or the
    deadline; every answer kept."""

    def __init__(self, port: int, operator: str, groups: list[list[str]], args: argparse.Namespace) -> None:
        self.port, self.operator, self.groups, self.args = port, operator, groups, args
        self.lock = threading.Condition()
        self.decisions = 0
        self.deals = 0  # of the matches answered, for the decisions a deal
        self.asking = 0  # matches asked for and not yet answered
        self.reports: list[dict[str, Any]] = []
        self.seated: dict[str, list[str]] = {}  # each match answered: the bots it was asked for
        self.errors: list[str] = []
        self.stopped = "decisions"
        self.deadline = 0.0

    def ask_one(self, names: list[str], deals: int) -> None:
        body = {"seats": [f"bot:{n}" for n in names], "deals": deals, "clock": self.args.clock, "par": "none"}
        report = ask(self.port, self.operator, body)["report"]
        decided = sum(r["counts"]["decisions"] for r in report["results"] if r["counts"] is not None)
        with self.lock:
            self.reports.append(report)
            self.seated[report["match"]] = list(names)
            self.decisions += decided
            self.deals += deals

    def table(self, names: list[str]) -> None:
        while True:
            with self.lock:
                while True:
                    if self.decisions >= self.args.decisions or self.errors:
                        return
                    if time.monotonic() > self.deadline:
                        self.stopped = "time"
                        return
                    # the matches under way bring about as many decisions a deal as those answered: wait for them
                    coming = self.asking * self.args.deals * self.decisions / max(self.deals, 1)
                    if self.decisions + coming < self.args.decisions:
                        break
                    self.lock.wait(1.0)
                self.asking += 1
            try:
                self.ask_one(names, self.args.deals)
            except Exception as err:  # a refused or failed request: the run fails, and says why
                with self.lock:
                    self.errors.append(f"table of {names[0]}..: {type(err).__name__}: {err}")
                return
            finally:
                with self.lock:
                    self.asking -= 1
                    self.lock.notify_all()

    def run(self) -> None:
        self.deadline = time.monotonic() + self.args.max_seconds
        threads = [threading.Thread(target=self.table, args=(g,), daemon=True) for g in self.groups]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


def measure(arena: Any, tables: Tables, trips: RoundTrips, fleet: BotProcesses) -> dict[str, Any]:
    """The timed run: its figures."""
    samples: list[int] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.005):
            samples.append(arena.running)

    trips.take()
    bots0, rss0 = fleet.cpu_seconds(), rss_mib()
    cpu0, wall0 = cpu_seconds(resource.RUSAGE_SELF), time.perf_counter()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    tables.run()
    wall, server_cpu = time.perf_counter() - wall0, cpu_seconds(resource.RUSAGE_SELF) - cpu0
    done.set()
    sampler.join()
    bots_cpu = fleet.cpu_seconds() - bots0
    rtt = np.array(trips.take()) * 1000
    counts = [r["counts"] for report in tables.reports for r in report["results"] if r["counts"] is not None]
    decisions = sum(c["decisions"] for c in counts)
    fallbacks = sum(c["fallbacks"] for c in counts)
    games = sum(report["deals"] for report in tables.reports)  # each deal played once
    return {
        "stopped": tables.stopped,
        "matches": len(tables.reports),
        "games": games,
        "decisions": decisions,
        "decisions_per_game": decisions / games if games else None,
        "fallbacks": fallbacks,
        "disconnects": sum(c["disconnects"] for c in counts),
        "statuses": sorted({report["status"] for report in tables.reports}),
        "request_errors": tables.errors,
        "round_trips": int(rtt.size),
        "seconds": wall,
        "decisions_per_second": (decisions - fallbacks) / wall,
        "tables_peak": max(samples, default=0),
        "tables_mean": float(np.mean(samples)) if samples else 0.0,
        "round_trip_ms_p50": float(np.percentile(rtt, 50)) if rtt.size else None,
        "round_trip_ms_p99": float(np.percentile(rtt, 99)) if rtt.size else None,
        "round_trip_ms_max": float(rtt.max()) if rtt.size else None,
        "server_cpu_seconds": server_cpu,
        "server_cpu_us_per_decision": 1e6 * server_cpu / decisions if decisions else None,
        "server_cpu_share": server_cpu / wall,
        "bots_cpu_seconds": bots_cpu,
        "bots_cpu_us_per_decision": 1e6 * bots_cpu / decisions if decisions else None,
        "server_rss_mib_start": rss0,
        "server_rss_mib_end": rss_mib(),
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tables", type=int, default=25, help="tables playing at once (default: 25)")
    parser.add_argument("--players", type=int, default=4, help="seats of each match, each a bot (default: 4)")
    parser.add_argument(
        "--decisions", type=int, default=20_000, help="no new match once the answered ones hold these (default 20000)"
    )
    parser.add_argument("--deals", type=int, default=8, help="deals of each match, each played once (default 8)")
    parser.add_argument(
        "--max-seconds", type=float, default=600.0, help="no new match after these seconds (default: 600)"
    )
    parser.add_argument(
        "--clock",
        type=float,
        default=10.0,
        help="seconds a bot has per move; long, so a slow machine shows as latency, not as fallbacks (default: 10)",
    )
    parser.add_argument("--bot-processes", type=int, default=4, help="processes the bots are spread over (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the secrets and the moves (default 0)")
    parser.add_argument("--quick", action="store_true", help="a test's run: 6 tables of 4 bots, 2,000 decisions")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if args.quick:
        args.tables, args.players, args.decisions, args.bot_processes = 6, 4, 2_000, 2
    if not 1 <= args.tables <= 32:
        parser.error("--tables: expected 1..32 (the server's MAX_MATCHES)")
    if not 2 <= args.players <= 8:
        parser.error("--players: expected 2..8")
    if not 1 <= args.deals <= 100:
        parser.error("--deals: expected 1..100")
    if args.decisions < 1 or args.max_seconds <= 0:
        parser.error("--decisions and --max-seconds: expected more than 0")
    if not 0.001 <= args.clock <= 60:
        parser.error("--clock: expected seconds in 0.001..60")
    if args.bot_processes < 1:
        parser.error("--bot-processes: expected at least 1")
    return args


def check(store: Any, asked: dict[str, list[str]], deals: dict[str, tuple[int, int]], bots: dict[str, Any]) -> Any:
    statuses, keys = read_back(store)
    told = {name: [(str(m), int(k), int(s)) for m, k, s in b["told"]] for name, b in bots.items()}
    return audit(asked, deals, statuses, keys, told)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from train.arena.in_thread import serve_in_thread
    from train.arena.server import Arena
    from train.arena.storage import Store
    from train.web import connections

    machine = machine_info()
    header = (
        f"{machine_line(machine)}; server in this process, {args.tables * args.players} bots in "
        f"{args.bot_processes} processes (random legal actions); {args.tables} tables of {args.players} bots, "
        f"{args.deals} deal(s) a match, each played once, until {args.decisions:,} decisions "
        f"(at most {args.max_seconds:g} s), clock {args.clock:g} s"
    )
    print(header, flush=True)
    trips = RoundTrips()
    trips.install()
    with tempfile.TemporaryDirectory(prefix="arena-load-") as data:
        store = Store(data)
        operator = store.add_operator("load")
        arena = Arena(store)
        arena.draw_secret = seeded_secrets(args.seed)  # the matches' deals, the same in every run
        # bots and match requests all come from the loopback: one address may hold every connection
        loopback = connections.Guard(per_address=connections.MAX_CONNECTIONS)
        server, port = serve_in_thread(arena, guard=loopback)
        bots = [(f"b{i}", store.add_bot(f"b{i}")) for i in range(args.tables * args.players)]
        names = [name for name, _ in bots]
        groups = [names[t * args.players : (t + 1) * args.players] for t in range(args.tables)]
        fleet = BotProcesses.start(
            f"ws://127.0.0.1:{port}/bot", bots, args.bot_processes, moves="random", seed=args.seed, folder=data
        )
        try:
            connected = fleet.wait_connected(arena)
            tables = Tables(port, operator, groups, args)
            tables.ask_one(groups[0], 1)  # untimed: compiled code, caches, the first sends
            warm = list(tables.reports)
            tables.reports, tables.decisions, tables.deals = [], 0, 0
            print(f"[{connected} bots connected; {args.tables} tables] ...", file=sys.stderr, flush=True)
            result = measure(arena, tables, trips, fleet)
        finally:
            told, bot_errors = fleet.stop()
            server.stop()
        reports = warm + tables.reports
        asked = tables.seated
        deals = {r["match"]: (r["deals"], r["players"]) for r in reports}
        found = check(store, asked, deals, told)
        store.close()
    answered = sum(b["moves"] for b in told.values())
    owed = sum(
        r["counts"]["decisions"] - r["counts"]["fallbacks"] for rep in reports for r in rep["results"] if r["counts"]
    )
    problems = list(found["problems"])
    problems += [f"bot {name}: {error}" for name, error in sorted(bot_errors.items())]
    problems += [f"request: {error}" for error in result["request_errors"]]
    if answered != owed:
        problems.append(f"the bots answered {answered} turns, the reports count {owed} answers")
    if result["fallbacks"] or result["disconnects"] or result["statuses"] != ["finished"]:
        problems.append(
            f"{result['fallbacks']} fallbacks, {result['disconnects']} disconnects, statuses {result['statuses']}"
        )
    if result["stopped"] != "decisions":
        problems.append(f"stopped by --max-seconds at {result['decisions']:,} decisions")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    bots_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result.update(
        {
            "bots": len(bots),
            "bots_connected": connected,
            "bots_answered": answered,
            "server_rss_mib_peak": peak,
            "bot_process_rss_mib_peak": bots_peak,
            "audit": found,
            "problems": problems,
        }
    )
    report(result)
    if args.json:
        from bourre_env import atomic_files

        keys = ("tables", "players", "deals", "decisions", "max_seconds", "clock", "bot_processes", "seed", "quick")
        payload = {
            "config": {k: getattr(args, k) for k in keys},
            "machine": machine,
            "result": result,
        }
        atomic_files.write_text(args.json, json.dumps(payload, indent=2) + "\n")
    return 1 if problems else 0


def report(r: dict[str, Any]) -> None:
    nan = float("nan")
    a = r["audit"]
    print(
        f"{r['bots_connected']} bots connected, tables at once: peak {r['tables_peak']}, mean {r['tables_mean']:.1f}; "
        f"{r['matches']} matches, {r['games']:,} games, {r['decisions']:,} decisions "
        f"({r['decisions_per_game'] or nan:.1f} a game) in {r['seconds']:.1f} s: "
        f"{r['decisions_per_second']:,.0f} decisions/s\n"
        f"round trip per move: p50 {r['round_trip_ms_p50'] or nan:.2f} ms, p99 {r['round_trip_ms_p99'] or nan:.2f} ms, "
        f"max {r['round_trip_ms_max'] or nan:.1f} ms ({r['round_trips']:,} timed)\n"
        f"CPU per decision: server {r['server_cpu_us_per_decision'] or nan:,.0f} us "
        f"({100 * r['server_cpu_share']:.0f}% of a core), bots {r['bots_cpu_us_per_decision'] or nan:,.0f} us\n"
        f"memory: server RSS {r['server_rss_mib_start'] or nan:.0f} -> {r['server_rss_mib_end'] or nan:.0f} MiB, "
        f"peak {r['server_rss_mib_peak']:.0f} MiB; largest bot process peak {r['bot_process_rss_mib_peak']:.0f} MiB\n"
        f"stored: {a['matches']} matches (the warm-up's included), {a['games_stored']:,} games of "
        f"{a['games_expected']:,}; faults: {a['faults'] or 'none'}"
    )
    for line in r["problems"]:
        print(f"FAIL: {line}")
    print("no game lost or doubled, every bot told of exactly its games" if not r["problems"] else "load test FAILED")


if __name__ == "__main__":
    sys.exit(main())
