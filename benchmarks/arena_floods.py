"""The arena under the floods of issue 61's probe: a match of built-in agents, and a trivial GET, alone and while one
client floods the server with WebSocket pings or with pipelined GETs.

What is measured
----------------
The server is the command an operator runs, ``python -m train.cli arena serve`` (one process, a temporary data
folder and its SQLite file, a free port on 127.0.0.1), started in a subprocess. Each flood comes from a loopback
address of its own (Linux routes all of 127.0.0.0/8 to the loopback), as a hostile client does from its machine;
the operator's match and the measuring GETs come from 127.0.0.1:

* ``pings``: ``--ping-connections`` (4) connections to ``/bot`` from 127.0.0.2, each writing empty ping frames as
  fast as it can without ever saying hello, and connecting again whenever the server cuts it off;
* ``gets``: ``--get-connections`` (32, under the 64 an address may hold) keep-alive connections from 127.0.0.3,
  each writing ``GET /api/people/options`` (``--route``) pipelined, ``--pipeline`` (50) requests at a time, reading
  whatever comes back, and connecting again whenever the server closes it.

The conditions ``none`` (no flood), ``pings`` and ``gets`` are taken in turn, ``--repeats`` times (interleaved, so
that the machine's other load falls on all three alike). In each, the flood is started (``none``: nothing is) and
``--settle`` seconds pass, then a match of built-in agents alone (``POST /api/matches``: ``--seats``, ``--deals``
deals, each with its par game) is timed from the request to its report, then ``--gets`` GETs of
``/api/people/options`` on one keep-alive connection, one every 50 ms (a page that polls, within any budget); then
the flood stops. Reported for each condition: the match's mean time with its 95% t-interval (the repeat as the unit)
and the ratio of its mean to the match's alone; the GETs' p50 with a distribution-free 95% interval (order
statistics), and p90; and the flood's own counts of what the server did with it (answers 200 and 429, pongs,
connections made and cut; the pings written are those the kernel's buffers took, most of them never read by the
server, which cuts the connection off first). The issue's targets: the match within 1.5 times its time alone, a
trivial GET under 100 ms p50. The deals are the server's secret ones (built-in agents alone, no seed named): the
repeats differ in their deals as in their timing.

Usage
-----
::

    python benchmarks/arena_floods.py                      # 45 deals and their par games: 90 games, 5 repeats
    python benchmarks/arena_floods.py --quick              # 3 deals, 10 GETs, 2 repeats: a smoke run
    python benchmarks/arena_floods.py --json floods.json
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import base64
import http.client
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from machine import machine_info, machine_line

from train.eval.statistics import t_interval

ROOT = Path(__file__).resolve().parent.parent
TRIVIAL = "/api/people/options"
PING_ADDRESS = "127.0.0.2"
GET_ADDRESS = "127.0.0.3"
TARGET_RATIO = 1.5
TARGET_GET_MS = 100.0
START_SECONDS = 60.0
GET_GAP = 0.05
FLOODS = ("none", "pings", "gets")
PING = b"\x89\x80\x00\x00\x00\x00"  # a masked ping frame, empty payload (a client's frames are masked: RFC 6455)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ArenaProcess:
    """``bourre arena serve`` in a subprocess on ``port``; the operator token it wrote at its first start."""

    def __init__(self, data: str, port: int) -> None:
        self.port = port
        token_file = Path(data) / "operator.token"
        command = [sys.executable, "-m", "train.cli", "arena", "serve", "--data", data, "--port", str(port), "--people"]
        self.process = subprocess.Popen(
            [*command, "--token-file", str(token_file)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.said: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + START_SECONDS
        while not any("bots connect to" in line for line in self.said):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the arena server did not start:\n" + "".join(self.said[-20:]))
            time.sleep(0.05)
        self.token = token_file.read_text().strip()
        while True:  # it listens a moment after it says where
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.said.append(line)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def connect_from(address: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((address, 0))
    sock.settimeout(5.0)
    sock.connect(("127.0.0.1", port))
    return sock


class Flood:
    """``connections`` threads running ``one`` (a connection's life) again and again until stopped; their counts."""

    def __init__(self, connections: int, one: Callable[[Flood], None]) -> None:
        self.stopping = threading.Event()
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._one = one
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(connections)]
        for thread in self.threads:
            thread.start()

    def count(self, what: str, n: int = 1) -> None:
        with self._lock:
            self.counts[what] = self.counts.get(what, 0) + n

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                self._one(self)
            except OSError:
                self.count("connections cut")
                time.sleep(0.001)

    def stop(self) -> dict[str, int]:
        self.stopping.set()
        for thread in self.threads:
            thread.join(10)
        return dict(self.counts)


def ping_connection(port: int) -> Callable[[Flood], None]:
    key = base64.b64encode(os.urandom(16)).decode()
    handshake = (
        f"GET /bot HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    ).encode()
    batch = PING * 100

    def one(flood: Flood) -> None:
        with connect_from(PING_ADDRESS, port) as sock:
            flood.count("connections")
            sock.sendall(handshake)
            answer = b""
            while b"\r\n\r\n" not in answer:
                chunk = sock.recv(4096)
                if not chunk:
                    raise ConnectionError("closed before the handshake's answer")
                answer += chunk
            if not answer.startswith(b"HTTP/1.1 101"):
                raise ConnectionError("handshake refused")
            sock.setblocking(False)
            while not flood.stopping.is_set():
                try:
                    flood.count("pings written", sock.send(batch) // len(PING))  # taken by the kernel's buffers
                except BlockingIOError:
                    time.sleep(0.0005)
                try:
                    got = sock.recv(65536)
                    if not got:
                        raise ConnectionError("closed")
                    flood.count("pongs", got.count(b"\x8a\x00"))
                except BlockingIOError:
                    pass

    return one


def get_connection(port: int, pipeline: int, route: str) -> Callable[[Flood], None]:
    request = f"GET {route} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    batch = request * pipeline

    def one(flood: Flood) -> None:
        with connect_from(GET_ADDRESS, port) as sock:
            flood.count("connections")
            while not flood.stopping.is_set():
                sock.sendall(batch)
                got = sock.recv(1 << 16)
                if not got:
                    raise ConnectionError("closed")
                flood.count("answered 200", got.count(b"HTTP/1.1 200"))
                flood.count("answered 429", got.count(b"HTTP/1.1 429"))

    return one


def timed_match(arena: ArenaProcess, seats: Sequence[str], deals: int) -> tuple[float, int]:
    """A match of built-in agents: its wall time (s) and its games, par games included."""
    body = {"seats": list(seats), "players": len(seats), "deals": deals}
    request = urllib.request.Request(
        f"http://127.0.0.1:{arena.port}/api/matches",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {arena.token}"},
        method="POST",
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as answer:
        report = json.loads(answer.read())
    seconds = time.perf_counter() - start
    if "text" not in report:
        raise RuntimeError(f"the match's answer has no report: {str(report)[:200]}")
    games = 2 * deals  # without a seed each deal is played once, beside its par game (docs/arena.md)
    return seconds, games


def timed_gets(port: int, count: int) -> list[float]:
    """``count`` GETs of ``TRIVIAL`` on one keep-alive connection, one every ``GET_GAP`` seconds (a page that polls,
    within any budget): each one's time, ms."""
    times: list[float] = []
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        for _ in range(count):
            time.sleep(GET_GAP)
            start = time.perf_counter()
            connection.request("GET", TRIVIAL)
            answer = connection.getresponse()
            answer.read()
            times.append((time.perf_counter() - start) * 1000)
            if answer.status != 200:
                raise RuntimeError(f"GET {TRIVIAL} answered {answer.status} from 127.0.0.1")
    finally:
        connection.close()
    return times


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_condition(arena: ArenaProcess, flood_name: str, args: argparse.Namespace) -> dict[str, Any]:
    """One match and ``--gets`` GETs, under ``flood_name`` (``none``: alone)."""
    flood = None
    if flood_name == "pings":
        flood = Flood(args.ping_connections, ping_connection(arena.port))
    elif flood_name == "gets":
        flood = Flood(args.get_connections, get_connection(arena.port, args.pipeline, args.route))
    try:
        time.sleep(args.settle)  # alone too: what the previous flood left behind has drained
        seconds, games = timed_match(arena, args.seats.split(","), args.deals)
        gets = timed_gets(arena.port, args.gets)
    finally:
        counts = flood.stop() if flood is not None else {}
    return {"match_seconds": seconds, "games": games, "get_ms": gets, "flood_counts": counts}


def median_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The median of ``values`` and a distribution-free 95% interval of it (order statistics, the normal
    approximation of the binomial)."""
    ordered = sorted(values)
    n = len(ordered)
    half = 1.96 * math.sqrt(n) / 2
    low, high = max(0, math.floor(n / 2 - half)), min(n - 1, math.ceil(n / 2 + half) - 1)
    return statistics.median(ordered), ordered[low], ordered[high]


def summary(name: str, runs: Sequence[dict[str, Any]], alone: float | None) -> dict[str, Any]:
    """A condition's figures over its repeats: the match's mean time and its 95% t-interval (the repeat as the
    unit), the ratio of means to the match alone, the GETs' p50 with its interval and p90, the flood's counts."""
    seconds = np.array([r["match_seconds"] for r in runs])
    interval = t_interval(seconds)
    gets = [ms for r in runs for ms in r["get_ms"]]
    p50, low, high = median_interval(gets)
    counts: dict[str, int] = {}
    for r in runs:
        for key, value in r["flood_counts"].items():
            counts[key] = counts.get(key, 0) + value
    mean = float(seconds.mean())
    return {
        "flood": name,
        "repeats": len(runs),
        "games": runs[0]["games"],
        "match_seconds": [float(x) for x in seconds],
        "match_seconds_mean": mean,
        "match_seconds_ci95": None if interval is None else list(interval),
        "ratio": mean / (alone if alone is not None else mean),
        "get_ms_p50": p50,
        "get_ms_p50_ci95": [low, high],
        "get_ms_p90": percentile(gets, 0.9),
        "gets": len(gets),
        "flood_counts": counts,
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seats", default="heuristic,random,random", help="the match's built-in agents")
    parser.add_argument("--deals", type=int, default=45, help="deals of the match (default 45: 90 games with par)")
    parser.add_argument("--ping-connections", type=int, default=4, help="connections of the ping flood (default 4)")
    parser.add_argument("--get-connections", type=int, default=32, help="connections of the GET flood (default 32)")
    parser.add_argument("--route", default=TRIVIAL, help=f"what the GET flood asks for (default {TRIVIAL})")
    parser.add_argument("--pipeline", type=int, default=50, help="GETs written at once on a connection (default 50)")
    parser.add_argument("--gets", type=int, default=50, help="GETs timed a condition and repeat (default 50)")
    parser.add_argument("--repeats", type=int, default=5, help="matches in each condition (default 5)")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds a flood runs before the match (default 2)")
    parser.add_argument("--quick", action="store_true", help="3 deals, 10 GETs, 2 repeats: a smoke run")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.deals, args.gets, args.settle, args.repeats = 3, 10, 0.5, 2
    for name in ("deals", "ping_connections", "get_connections", "pipeline", "gets", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')}: expected at least 1, got {getattr(args, name)}")
    if not args.settle >= 0:
        parser.error(f"--settle: expected seconds, 0 or more, got {args.settle}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not sys.platform.startswith("linux"):
        print("arena_floods: floods come from 127.0.0.2 and 127.0.0.3, which Linux alone routes", file=sys.stderr)
        return 2
    info = machine_info()
    print(f"{machine_line(info)}; seed: none (built-in agents, the server's own secret deals)", flush=True)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in FLOODS}
    with tempfile.TemporaryDirectory() as data:
        arena = ArenaProcess(data, free_port())
        try:
            timed_match(arena, args.seats.split(","), 1)  # the compiled code and the agents, before timing
            for repeat in range(args.repeats):  # interleaved, so that the machine's other load falls on all alike
                for name in FLOODS:
                    runs[name].append(run_condition(arena, name, args))
                print(f"  [{repeat + 1}/{args.repeats}]", file=sys.stderr, flush=True)
        finally:
            arena.stop()
    alone = summary("none", runs["none"], None)
    results = [alone, *(summary(name, runs[name], alone["match_seconds_mean"]) for name in FLOODS[1:])]
    print(
        f"a match of {args.seats} ({args.deals} deals, {alone['games']} games), {args.repeats} times in each "
        f"condition; the ping flood: {args.ping_connections} connections; the GET flood: {args.get_connections} "
        f"connections, {args.pipeline} pipelined GETs of {args.route}; {args.gets} GETs of {TRIVIAL} timed a "
        "condition and repeat"
    )
    print("| flood | match (s), mean [95% CI] | x alone | GET p50 (ms) [95% CI] | GET p90 (ms) | what the flood got |")
    print("|---|---|---|---|---|---|")
    for r in results:
        ci = r["match_seconds_ci95"]
        match = f"{r['match_seconds_mean']:.2f}" + ("" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]")
        low, high = r["get_ms_p50_ci95"]
        got = ", ".join(f"{v} {k}" for k, v in sorted(r["flood_counts"].items())) or "-"
        print(
            f"| {r['flood']} | {match} | {r['ratio']:.2f} | {r['get_ms_p50']:.1f} [{low:.1f}, {high:.1f}] | "
            f"{r['get_ms_p90']:.1f} | {got} |"
        )
    print(f"targets: the match within {TARGET_RATIO:g}x its time alone, a GET under {TARGET_GET_MS:g} ms p50")
    if args.json:
        settings = {k: v for k, v in vars(args).items() if k != "json"}
        report = {
            "settings": settings,
            "machine": info,
            "targets": {"ratio": TARGET_RATIO, "get_ms_p50": TARGET_GET_MS},
            "results": results,
        }
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, urllib.error.URLError, OSError) as err:
        print(f"arena_floods: {err}", file=sys.stderr)
        sys.exit(1)
