"""The arena server's cost as bots written outside the project see it: a real ``bourre arena serve``, bots in processes
of their own speaking docs/protocol.md, and the server's CPU read from /proc.

What is measured
----------------
The server is the command an operator runs, ``bourre arena serve`` (``train.cli``, one process, a temporary data
folder and its SQLite file, a free port on 127.0.0.1), started in a subprocess; the only change to it is where a
match's secret comes from: SHA-256(``bench:SEED:i``) for its ``i``-th match (``arena_bots.seeded_secrets``), so that
a run with the same seed deals the same cards. (A commit whose remote matches take a seed, before the secrets, is
asked for the seed ``(SEED * 1000 + i) % 2**32`` instead.) Every seat is a bot in an OS process of its own:
``arena_outside_bot.js`` (``--bots node``: Node and the ``ws`` package) or ``arena_outside_bot.py`` (``--bots
python``: the ``websockets`` client alone), each written from the protocol page, not from the project's client;
each answers, ``--think`` ms after the turn came (0: at once), a random legal action (``--moves random``: games of
tricks, some 29 decisions a 5-seat game) or the first (``first``: every seat passes). On Linux the bots connect from
127.0.0.2 and up, 48 to an address, within the server's 64 connections an address.

A run is ``--tables`` operator matches at once (``POST /api/matches``, ``--deals`` deals each, ``par: none``), timed
from the requests to the last report, after an untimed match of one deal (compiled code, caches, the first sends):

* server CPU a decision: utime + stime of the server's process (its threads; cutime + cstime, of children it waited
  for, too) from ``/proc/PID/stat`` across the run, over the decisions the bots counted;
* decisions/s: the decisions the bots answered over the run's wall time;
* round trip, p50 and p99: from an action leaving a bot (timed before its send) to the match's next turn reaching a
  bot (the same or another: turns count up over every seat), both on the machine's monotonic clock, which every
  process reads; what a bot waits for beyond the other bots' thinking. ``between deals`` is the mean of those gaps
  that cross a deal's end (its storage, ``deal_end`` and the next ``deal_start``);
* bots' CPU a decision: the bot processes' utime + stime across the run;
* the loop thread (the server's main thread, its event loop) a decision: its user and system CPU, and its voluntary
  context switches, which are mostly its sleeps in ``epoll_wait`` between messages (``/proc/PID/task/PID``).

``--against REV`` exports each commit with ``git archive`` (once, into a folder named by its hash under the temporary
folder, kept for the next run: numba's cache is keyed on the files' paths) and runs its own server and bots beside
this checkout's; the runs then alternate, ``--rounds`` times (the order reversed every other round), ``--repeats``
runs of each tree a round, so that a change of the machine's load falls on all alike. Printed: each tree's median
over its runs and their range, and the median over the rounds of this checkout's CPU a decision over the tree's
(each round's medians). A commit that plays every rotation of a deal (before the single format) is asked for
``--deals / --players`` deals, so that its runs hold as many games. ``--profile PATH`` runs this checkout's server
under cProfile (its event loop's thread, on that thread's CPU clock), writes the stats to PATH and prints the
functions that cost most; its CPU figures are the profiler's too, not to be compared.

Usage
-----
::

    python benchmarks/arena_outside.py                              # 1 table, 5 node bots, 40 deals, 3 runs
    python benchmarks/arena_outside.py --against 821ed84 bc91e32 --rounds 4 --think 2   # see below
    python benchmarks/arena_outside.py --tables 16 --deals 20
    python benchmarks/arena_outside.py --bots python --players 3 --deals 2 --rounds 1 --repeats 1   # a test's
    python benchmarks/arena_outside.py --profile server.prof

``--node-modules DIR`` names the folder that holds ``ws`` (default: ``train/arena/examples/node_modules``, made by
``npm ci --prefix train/arena/examples``). The whole run is bounded by ``--timeout`` seconds (everything it started
is then killed, status 1). 821ed84 closes a bot that sends more than 100 messages a second, its answers included:
against it, bots that answer at once lose their connections at one table (``--think 2`` keeps them under it).
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from machine import machine_info, machine_line

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
BOTS = {"node": HERE / "arena_outside_bot.js", "python": HERE / "arena_outside_bot.py"}
START_SECONDS = 900.0
"""How long a server has to listen: an exported commit compiles its kernels at its first start (minutes on 2 cores)."""
CONNECT_SECONDS = 120.0
LOG_SECONDS = 30.0
"""How long after a match's report its bots have to log its end."""
BOTS_AN_ADDRESS = 48
"""Bots connecting from one loopback address (the server allows 64 connections an address)."""
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_cpu(pid: int) -> float:
    """utime + stime + cutime + cstime of ``pid`` in seconds (``/proc/PID/stat``); 0 once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text.rpartition(")")[2].split()  # after the command's name, which may hold spaces: field 3 on
    return sum(int(x) for x in fields[11:15]) / TICK


def loop_thread(pid: int) -> tuple[float, float, int]:
    """The user and system CPU seconds of ``pid``'s main thread (the server's event loop) and its voluntary context
    switches (each a sleep in ``epoll_wait``, or a wait for the GIL or a lock), from ``/proc/PID/task/PID``."""
    task = Path(f"/proc/{pid}/task/{pid}")
    try:
        fields = (task / "stat").read_text().rpartition(")")[2].split()
        status = (task / "status").read_text()
    except OSError:
        return 0.0, 0.0, 0
    switches = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("voluntary_")), 0)
    return int(fields[11]) / TICK, int(fields[12]) / TICK, switches


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Tree:
    """A tree of the code to run: this checkout, or a commit exported; what its matches accept."""

    label: str
    path: Path
    commit: str
    single: bool = True  # plays each deal once (else every rotation of it)
    par: bool = True  # a match may say par: none
    secret: bool = True  # a remote match is dealt from a secret (else from the request's seed)

    def __post_init__(self) -> None:
        source = (self.path / "train" / "arena" / "match.py").read_text()
        self.single, self.par, self.secret = "FORMATS" in source, "NO_PAR" in source, "def draw_secret" in source


def git(*argv: str, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    return subprocess.run(["git", "-C", str(ROOT), *argv], capture_output=True, check=False, **kwargs)


def resolved(rev: str) -> str | None:
    """The commit's full hash, or None where git finds no such commit."""
    found = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", text=True)
    return found.stdout.strip() if found.returncode == 0 else None


def export(rev: str) -> Tree:
    """``rev`` exported with ``git archive`` into a folder named by its hash (kept: the next run compiles nothing)."""
    full = resolved(rev)
    if full is None:
        raise SystemExit(f"--against: {rev!r} is no commit of this repository")
    folder = Path(tempfile.gettempdir()) / "bourre-arena-outside" / full
    if not (folder / ".exported").exists():
        partial = folder.with_name(f"{full}.{os.getpid()}")
        partial.mkdir(parents=True, exist_ok=True)
        archive = git("archive", full)
        subprocess.run(["tar", "-x", "-C", str(partial)], input=archive.stdout, check=True)
        (partial / ".exported").write_text(full + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)
    return Tree(rev, folder, full)


def this_checkout() -> Tree:
    head = git("rev-parse", "HEAD", text=True).stdout.strip()
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", text=True).stdout.strip())
    return Tree("this checkout", ROOT, head + (" (and changes)" if dirty else ""))


def in_tree(tree: Path) -> None:
    """This process imports the project from ``tree`` (checked)."""
    sys.path.insert(0, str(tree))
    import train

    if not Path(train.__file__).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"train came from {train.__file__}, not from {tree}")


def serve(argv: list[str]) -> int:
    """``--serve TREE SEED PROFILE ARGS...``: ``bourre arena serve ARGS`` of ``TREE``, its matches' secrets drawn from
    ``SEED``, under cProfile if ``PROFILE`` is not ``-`` (the stats written there when it stops)."""
    tree, seed, profile, *rest = argv
    in_tree(Path(tree))
    from arena_bots import seeded_secrets

    from train import cli
    from train.arena import server

    if hasattr(server, "draw_secret"):
        server.draw_secret = seeded_secrets(int(seed))  # what Arena() draws its matches' secrets with
    sys.argv = ["bourre", *rest]  # as the command itself: its signal handling included
    if profile == "-":
        return cli.main()
    import cProfile

    profiler = cProfile.Profile(time.thread_time)  # the event loop's thread, on its own CPU clock
    profiler.enable()
    try:
        return cli.main()
    finally:
        profiler.disable()
        profiler.dump_stats(profile)


def register(argv: list[str]) -> int:
    """``--register TREE DATA N``: an operator and bots ``b0`` to ``bN-1`` in DATA's database, their tokens printed as
    JSON (the tree's own store, as ``bourre arena add-bot`` would make them)."""
    tree, data, count = argv
    in_tree(Path(tree))
    from train.arena.storage import Store

    store = Store(data)
    try:
        tokens = {"operator": store.add_operator("bench"), "bots": [store.add_bot(f"b{i}") for i in range(int(count))]}
    finally:
        store.close()
    print(json.dumps(tokens))
    return 0


class Children:
    """Every process the run started, so that the deadline can end them all."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.processes: list[subprocess.Popen[Any]] = []

    def start(self, command: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
        with self.lock:
            process = subprocess.Popen(command, **kwargs)
            self.processes.append(process)
            return process

    def end_all(self) -> None:
        with self.lock:
            for process in self.processes:
                if process.poll() is None:
                    process.kill()
            for process in self.processes:
                with_timeout(process.wait, 10)


def with_timeout(wait: Any, seconds: float) -> None:
    with contextlib.suppress(subprocess.TimeoutExpired):
        wait(seconds)


@dataclass
class Side:
    """One tree's server, bots and runs."""

    tree: Tree
    port: int
    server: subprocess.Popen[Any]
    operator: str
    names: list[str]
    bots: list[subprocess.Popen[Any]]
    logs: list[Path]
    offsets: list[int]
    said: list[str] = field(default_factory=list)
    loop: str = "?"
    matches: int = 0
    runs: list[dict[str, Any]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def ask(self, path: str, body: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
        request = urllib.request.Request(
            self.url(path),
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.operator}"},
            method="GET" if body is None else "POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                result: dict[str, Any] = json.loads(answer.read())
        except urllib.error.HTTPError as err:  # a refusal, in the server's words
            raise SystemExit(f"{self.tree.label}: {path} answered {err.code}: {err.read().decode()[:500]}") from None
        return result

    def event_loop(self) -> str:
        """uvloop when the server process has mapped its library, else asyncio's own."""
        try:
            maps = Path(f"/proc/{self.server.pid}/maps").read_text()
        except OSError:
            return "?"
        return "uvloop" if "uvloop" in maps else "asyncio"

    def logged(self) -> dict[str, list[dict[str, Any]]]:
        """The bots' lines logged since the last look, by match."""
        found: dict[str, list[dict[str, Any]]] = {}
        for i, path in enumerate(self.logs):
            if not path.exists():
                continue
            with path.open() as log:
                log.seek(self.offsets[i])
                for line in log:
                    if not line.endswith("\n"):
                        break
                    self.offsets[i] += len(line.encode())
                    entry = json.loads(line)
                    found.setdefault(entry["match"], []).append(entry)
        return found


def start_side(tree: Tree, args: argparse.Namespace, scratch: Path, children: Children, profile: str) -> Side:
    data = scratch / f"{len(list(scratch.iterdir()))}-{tree.commit[:12]}"  # a tree may be this checkout's commit
    data.mkdir()
    env = {**os.environ, "PYTHONPATH": str(tree.path)}
    count = max(args.tables) * args.players
    made = subprocess.run(
        [sys.executable, __file__, "--register", str(tree.path), str(data), str(count)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree.path,
        timeout=300,
    )
    if made.returncode != 0:
        raise SystemExit(f"{tree.label}: the bots could not be registered:\n{made.stderr[-2000:]}")
    tokens = json.loads(made.stdout.strip().splitlines()[-1])
    port = free_port()
    command = [sys.executable, __file__, "--serve", str(tree.path), str(args.seed), profile]
    command += ["arena", "serve", "--data", str(data), "--port", str(port)]
    server = children.start(
        command, cwd=tree.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    side = Side(tree, port, server, tokens["operator"], [], [], [], [])
    threading.Thread(target=lambda: side.said.extend(server.stdout or ()), daemon=True).start()
    deadline = time.monotonic() + START_SECONDS
    while True:  # it listens once its game code is loaded (compiled, at a commit's first start)
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{tree.label}: the arena server did not start:\n" + "".join(side.said[-20:]))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    bot_env = {**os.environ, "NODE_PATH": str(args.node_modules)}
    for i, token in enumerate(tokens["bots"]):
        name = f"b{i}"
        token_file, log = data / f"{name}.token", data / f"{name}.log"
        token_file.write_text(token + "\n")
        interpreter = ["node"] if args.bots == "node" else [sys.executable]
        command = [*interpreter, str(BOTS[args.bots]), f"ws://127.0.0.1:{port}/bot", name, str(token_file)]
        command += [args.moves, str(args.seed), f"{args.think:g}", str(log)]
        if sys.platform.startswith("linux"):
            command.append(f"127.0.0.{2 + i // BOTS_AN_ADDRESS}")
        side.bots.append(children.start(command, env=bot_env, cwd=data, stdin=subprocess.DEVNULL))
        side.names.append(name)
        side.logs.append(log)
        side.offsets.append(0)
    deadline = time.monotonic() + CONNECT_SECONDS
    while set(side.ask("/api/bots", None, 30)["bots"]) != set(side.names):
        if time.monotonic() > deadline or any(bot.poll() is not None for bot in side.bots):
            raise SystemExit(f"{tree.label}: the bots did not all connect")
        time.sleep(0.2)
    side.loop = side.event_loop()
    return side


def run_tables(side: Side, args: argparse.Namespace, tables: int, deals: int, until: float) -> dict[str, Any]:
    """``tables`` matches at once on ``side``'s server; their figures."""
    tree, n = side.tree, args.players
    bodies = []
    for t in range(tables):
        body: dict[str, Any] = {"seats": [f"bot:{b}" for b in side.names[t * n : (t + 1) * n]], "clock": args.clock}
        body["deals"] = deals if tree.single else max(1, round(deals / n))
        if tree.par:
            body["par"] = "none"
        if not tree.secret:
            body["seed"] = (args.seed * 1000 + side.matches) % 2**32
        side.matches += 1
        bodies.append(body)
    cpu0, bots0 = proc_cpu(side.server.pid), sum(proc_cpu(b.pid) for b in side.bots)
    loop0 = loop_thread(side.server.pid)
    wall0 = time.perf_counter()
    timeout = max(1.0, until - time.monotonic())
    with ThreadPoolExecutor(tables) as pool:
        answers = list(pool.map(lambda body: side.ask("/api/matches", body, timeout), bodies))
    wall = time.perf_counter() - wall0
    cpu, bots_cpu = proc_cpu(side.server.pid) - cpu0, sum(proc_cpu(b.pid) for b in side.bots) - bots0
    user, system, sleeps = (b - a for a, b in zip(loop0, loop_thread(side.server.pid), strict=True))
    reports = [answer["report"] for answer in answers]
    ids = {report["match"] for report in reports}
    logged: dict[str, list[dict[str, Any]]] = {}
    deadline = time.monotonic() + LOG_SECONDS
    while any(len(logged.get(m, [])) < n for m in ids):
        for match, entries in side.logged().items():
            logged.setdefault(match, []).extend(entries)
        if time.monotonic() > deadline:
            raise SystemExit(f"{tree.label}: the bots did not log the end of every match")
        time.sleep(0.02)
    gaps, between = [], []
    for match in ids:
        turns = sorted((t for entry in logged[match] for t in entry["turns"]), key=lambda t: t[0])
        for (_, deal, _, sent), (_, next_deal, received, _) in zip(turns, turns[1:], strict=False):
            gaps.append(received - sent)
            if next_deal != deal:
                between.append(received - sent)
    decisions = sum(len(entry["turns"]) for match in ids for entry in logged[match])
    counts = [r["counts"] for report in reports for r in report["results"] if r.get("counts")]
    ms = np.array(gaps, dtype=np.float64) / 1e6
    return {
        "tables": tables,
        "statuses": sorted({report["status"] for report in reports}),
        "games": sum(report["deals"] * (1 if tree.single else n) for report in reports),
        "decisions": decisions,
        "server_decisions": sum(c["decisions"] for c in counts),
        "fallbacks": sum(c["fallbacks"] for c in counts),
        "seconds": wall,
        "server_cpu_seconds": cpu,
        "server_cpu_us_per_decision": 1e6 * cpu / decisions if decisions else math.nan,
        "decisions_per_second": decisions / wall,
        "round_trip_ms_p50": float(np.percentile(ms, 50)) if ms.size else math.nan,
        "round_trip_ms_p99": float(np.percentile(ms, 99)) if ms.size else math.nan,
        "between_deals_ms_mean": statistics.fmean(between) / 1e6 if between else math.nan,
        "bots_cpu_us_per_decision": 1e6 * bots_cpu / decisions if decisions else math.nan,
        "loop_user_us_per_decision": 1e6 * user / decisions if decisions else math.nan,
        "loop_system_us_per_decision": 1e6 * system / decisions if decisions else math.nan,
        "loop_sleeps_per_decision": sleeps / decisions if decisions else math.nan,
    }


def stop_side(side: Side) -> None:
    for bot in side.bots:
        if bot.poll() is None:
            bot.terminate()
    if side.server.poll() is None:
        side.server.send_signal(signal.SIGTERM)
        try:
            side.server.wait(30)
        except subprocess.TimeoutExpired:
            side.server.kill()
    for bot in side.bots:
        with_timeout(bot.wait, 10)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tables", type=int, nargs="+", default=[1], help="matches at once, a run each (default 1)")
    parser.add_argument("--players", type=int, default=5, help="seats a match, every one a bot (default 5)")
    parser.add_argument("--deals", type=int, default=40, help="deals of each match (default 40)")
    parser.add_argument("--moves", choices=("random", "first"), default="random", help="the bots' (default random)")
    parser.add_argument("--bots", choices=tuple(BOTS), default="node", help="the bots' language (default node)")
    parser.add_argument("--node-modules", type=Path, default=ROOT / "train" / "arena" / "examples" / "node_modules")
    parser.add_argument("--against", nargs="+", default=[], metavar="REV", help="commits to run beside this checkout")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the trees (default 3)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each tree a round (default 1)")
    parser.add_argument("--think", type=float, default=0.0, help="ms each bot waits before it answers (default 0)")
    parser.add_argument("--clock", type=float, default=10.0, help="seconds a bot has a move (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the matches' secrets (default 0)")
    parser.add_argument("--profile", metavar="PATH", help="this checkout's server under cProfile, its stats to PATH")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds the whole run may take (default 1800)")
    parser.add_argument("--json", metavar="PATH", help="also write every run's figures as JSON to PATH")
    args = parser.parse_args(argv)
    if not args.tables or min(args.tables) < 1 or max(args.tables) > 32:
        parser.error("--tables: expected values in 1..32 (the server's MAX_MATCHES)")
    if not 2 <= args.players <= 8:
        parser.error("--players: expected 2..8")
    if not 1 <= args.deals <= 1000:
        parser.error("--deals: expected 1..1000")
    if args.rounds < 1 or args.repeats < 1:
        parser.error("--rounds and --repeats: expected at least 1")
    if not 0.001 <= args.clock <= 60:
        parser.error("--clock: expected seconds in 0.001..60")
    if not 0 <= args.think <= 1000 * args.clock / 2:
        parser.error("--think: expected ms in 0..half the --clock")
    if not 0 <= args.seed < 2**32:
        parser.error("--seed: expected 0..2**32-1")
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        parser.error("--timeout: expected seconds > 0")
    for rev in args.against:
        if resolved(rev) is None:
            parser.error(f"--against: {rev!r} is no commit of this repository")
    if args.bots == "node" and shutil.which("node") is None:
        parser.error("--bots node: node is not installed (or --bots python)")
    if args.bots == "node" and not (args.node_modules / "ws").is_dir():
        parser.error(f"--node-modules: no ws package in {args.node_modules} (npm ci --prefix train/arena/examples)")
    args.node_modules = args.node_modules.resolve()
    return args


FIGURES = (
    "server_cpu_us_per_decision",
    "decisions_per_second",
    "round_trip_ms_p50",
    "round_trip_ms_p99",
    "loop_user_us_per_decision",
    "loop_system_us_per_decision",
    "loop_sleeps_per_decision",
)
"""A run's figures that the summary gives the median and range of."""


def summary(sides: list[Side], rounds: int) -> list[dict[str, Any]]:
    """Each tree's medians over its runs, and the median over the rounds of this checkout's CPU over the tree's."""
    rows = []
    ours = sides[0]
    for side in sides:
        for tables in sorted({r["tables"] for r in side.runs}):
            runs = [r for r in side.runs if r["tables"] == tables]
            row: dict[str, Any] = {"tree": side.tree.label, "commit": side.tree.commit, "tables": tables}
            row["event_loop"], row["runs"] = side.loop, len(runs)
            for key in FIGURES:
                values = [r[key] for r in runs]
                row[key], row[key + "_range"] = statistics.median(values), (min(values), max(values))
            row["decisions"] = statistics.median(r["decisions"] for r in runs)
            ratios = []
            for k in range(rounds):
                mine = [r["server_cpu_us_per_decision"] for r in ours.runs if r["tables"] == tables and r["round"] == k]
                theirs = [r["server_cpu_us_per_decision"] for r in runs if r["round"] == k]
                if mine and theirs:
                    ratios.append(statistics.median(mine) / statistics.median(theirs))
            row["ratio"] = statistics.median(ratios) if ratios and side is not ours else None
            row["ratio_range"] = (min(ratios), max(ratios)) if ratios and side is not ours else None
            rows.append(row)
    return rows


def print_summary(rows: list[dict[str, Any]]) -> None:
    print(
        "\n| tree | tables | loop | runs | decisions a run | server CPU µs/decision, median (range) | decisions/s "
        "| round trip p50 / p99 ms | loop thread user + system µs, sleeps a decision | this checkout / tree |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        low, high = r["server_cpu_us_per_decision_range"]
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f} [{r['ratio_range'][0]:.2f}, {r['ratio_range'][1]:.2f}]"
        print(
            f"| {r['tree']} | {r['tables']} | {r['event_loop']} | {r['runs']} | {r['decisions']:,.0f} "
            f"| {r['server_cpu_us_per_decision']:,.0f} ({low:,.0f}-{high:,.0f}) | {r['decisions_per_second']:,.0f} "
            f"| {r['round_trip_ms_p50']:.2f} / {r['round_trip_ms_p99']:.2f} "
            f"| {r['loop_user_us_per_decision']:,.0f} + {r['loop_system_us_per_decision']:,.0f}, "
            f"{r['loop_sleeps_per_decision']:.2f} | {ratio} |"
        )


def print_profile(path: str, lines: int = 25) -> None:
    import pstats

    print(f"\nthe server's event loop thread under cProfile (CPU seconds; {path}):")
    pstats.Stats(path).sort_stats("tottime").print_stats(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--serve"]:
        return serve(argv[1:])
    if argv[:1] == ["--register"]:
        return register(argv[1:])
    args = parse_args(argv)
    until = time.monotonic() + args.timeout
    trees = [this_checkout(), *(export(rev) for rev in args.against)]
    children = Children()

    def expire() -> None:
        print(f"arena_outside: the run took more than --timeout {args.timeout:g} s: stopped", file=sys.stderr)
        children.end_all()
        os._exit(1)

    watchdog = threading.Timer(args.timeout, expire)
    watchdog.daemon = True
    watchdog.start()
    machine = machine_info()
    print(
        f"{machine_line(machine)}; {time.strftime('%Y-%m-%d %H:%M %Z')}; a bourre arena serve process per tree, "
        f"{args.players} {args.bots} bots a match ({args.moves} moves), {args.deals} deals, par none, seed {args.seed}",
        flush=True,
    )
    sides: list[Side] = []
    try:
        with tempfile.TemporaryDirectory(prefix="arena-outside-") as scratch:
            for i, tree in enumerate(trees):
                profile = str(Path(args.profile).resolve()) if args.profile and i == 0 else "-"
                sides.append(start_side(tree, args, Path(scratch), children, profile))
                run_tables(sides[-1], args, 1, 1, until)  # untimed: compiled code, caches, the first sends
            for k in range(args.rounds):
                for side in sides if k % 2 == 0 else sides[::-1]:
                    for tables in args.tables:
                        for _ in range(args.repeats):
                            run = {**run_tables(side, args, tables, args.deals, until), "round": k}
                            side.runs.append(run)
                            print(
                                f"[round {k + 1}/{args.rounds}] {side.tree.label}: {tables} table(s), "
                                f"{run['decisions']:,} decisions, {run['server_cpu_us_per_decision']:,.0f} µs of "
                                f"server CPU a decision, {run['decisions_per_second']:,.0f} decisions/s, round trip "
                                f"{run['round_trip_ms_p50']:.2f} / {run['round_trip_ms_p99']:.2f} ms, loop thread "
                                f"{run['loop_user_us_per_decision']:,.0f} + {run['loop_system_us_per_decision']:,.0f} "
                                f"µs, {run['loop_sleeps_per_decision']:.2f} sleeps a decision",
                                file=sys.stderr,
                                flush=True,
                            )
            for side in sides:
                stop_side(side)
    finally:
        watchdog.cancel()
        children.end_all()
    rows = summary(sides, args.rounds)
    print_summary(rows)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.profile:
        print_profile(args.profile)
    if args.json:
        from bourre_env import atomic_files

        settings = {k: v if not isinstance(v, Path) else str(v) for k, v in vars(args).items()}
        trees_json = [{"label": s.tree.label, "commit": s.tree.commit, "event_loop": s.loop} for s in sides]
        runs = [{"tree": s.tree.label, **r} for s in sides for r in s.runs]
        payload = {"settings": settings, "machine": machine, "trees": trees_json, "runs": runs, "summary": rows}
        atomic_files.write_text(args.json, json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
