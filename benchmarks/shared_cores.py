"""The threaded paths with 0, 1 and 2 other busy processes on the machine: one thread, the fixed split, the chooser.

    python benchmarks/shared_cores.py --seconds 3 --repeats 3 --competitors 0 1 2

Each mode is a process of its own, started once (the threading layer's wait policy belongs to a process):

* ``1 thread``: ``threads=1``, the one-thread kernels;
* ``fixed``: ``threads=T`` (the cores this process may use, ``bourre_env.threads.auto_threads()``) with
  ``BOURRE_THREADS_ADAPT=0``: every call on ``T`` threads, one contiguous share each, on the threading layer's
  default wait policy: the code before ``bourre_env.threads``;
* ``sleeping``: ``threads=T`` with the probe's choice call by call and ``OMP_WAIT_POLICY=PASSIVE`` (waiting threads
  sleep at once): the code from 2026-11-25 (issue 47's passive wait) to 2026-12-02;
* ``chooser``: ``threads=T`` as the code runs today (the probe's choice call by call; the spin chosen at the first
  threaded call, ``bourre_env.threads.start_spin``: the workers start before any competitor, so on a quiet machine
  this is the threading layer's own brief spin at every count);
* ``short spin``: ``chooser`` with ``GOMP_SPINCOUNT=SHORT_SPIN`` (10,000) in its environment: what the start-time
  choice picks where other threads are runnable on the usable cores. ``chooser`` against ``short spin`` at each
  count is the evidence for that choice.

For each count of competitors the script starts that many busy processes itself (``python -c`` loops that end by
themselves after the count's time budget, and are killed when the count is done), then has the modes take
turns in half-second slices, so that a change of the machine's load falls on them alike,
on three paths: ``BourreVectorEnv`` (1,024 tables, 5 players, heuristic opponents from the state rows, random legal
learner actions: learner steps/s), ``BatchGame.step`` with its masks and observations (1,024 tables, random legal
actions: decisions/s, short calls) and ``BatchGame.random_play`` (1,024 tables, 50 decisions per table per call:
decisions/s, long calls). Each row of the output is one (competitors, path): the median of ``--repeats`` runs of
each mode, their range, and the ratios. ``nproc`` and the load average are printed before each count. The games
are seeded (``--seed``) and every mode plays the same games (the results do not depend on the thread count); only
the speed differs.
"""

from __future__ import annotations

import os

# numba's pool: the cores this process may use, unless set in the environment (preamble.py would make it 1)
os.environ.setdefault("NUMBA_NUM_THREADS", str(len(os.sched_getaffinity(0))))

# First: the thread variables, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from agents.batched_players import BatchedHeuristicPlayer, BatchedRandomPlayer
from bourre_env import BourreVectorEnv, threads
from bourre_env.batch import BatchGame

MODES = ("1 thread", "fixed", "sleeping", "chooser", "short spin")
PATHS = ("vector env", "BatchGame.step", "BatchGame.random_play")

BUSY = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end:\n    pass\n"
"""A competitor: one busy core, ending by itself after its budget should the benchmark be killed."""


@contextmanager
def competitors(count: int, seconds: float) -> Iterator[None]:
    """``count`` busy processes for at most ``seconds``, killed on the way out."""
    procs = [subprocess.Popen([sys.executable, "-c", BUSY.format(seconds=seconds)]) for _ in range(count)]
    try:
        time.sleep(0.2)  # started and busy before the timing
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def vector_env(tables: int, n_threads: int, seed: int) -> Callable[[], int]:
    env = BourreVectorEnv(tables, BatchedHeuristicPlayer("default", 0), num_players=5, threads=n_threads)
    env.reset(seed=seed)
    learner = BatchedRandomPlayer(seed)
    rows = np.arange(tables)

    def step() -> int:
        masks = env.action_masks().view(np.int8)
        env.step(learner.act_batch(masks, masks, rows))
        return tables

    return step


def game_step(tables: int, n_threads: int, seed: int) -> Callable[[], int]:
    game = BatchGame(tables, seed=seed, num_players=5, threads=n_threads)
    pick = np.random.default_rng(seed)
    masks = np.zeros((tables, 117), dtype=np.int8)
    obs = np.zeros((tables, 1174), dtype=np.float32)

    def step() -> int:
        game.legal_masks(out=masks)
        game.observations(out=obs)
        k = (pick.random(tables) * masks.sum(axis=1)).astype(np.int64)
        game.step(np.argmax(np.cumsum(masks, axis=1) > k[:, None], axis=1))
        return tables

    return step


def game_random_play(tables: int, n_threads: int, seed: int) -> Callable[[], int]:
    game = BatchGame(tables, seed=seed, num_players=5, threads=n_threads)
    return lambda: game.random_play(50)


MAKERS = {"vector env": vector_env, "BatchGame.step": game_step, "BatchGame.random_play": game_random_play}


def worker(mode: str, paths: list[str], tables: int, seed: int) -> None:
    """One mode's process: its steppers warmed up, then ``PATH SECONDS`` lines on stdin, each answered with the units
    done and the seconds taken; an empty line ends it. Each mode is its own process because the threading layer's
    wait policy is the process's (``bourre_env.threads``), and ``fixed`` is the code before it."""
    n_threads = 1 if mode == "1 thread" else threads.auto_threads()
    made = {path: MAKERS[path](tables, n_threads, seed) for path in paths}
    for step in made.values():
        step()  # compiled and warm
    print("ready", flush=True)
    for line in sys.stdin:
        if not line.strip():
            break
        path, seconds = line.rsplit(" ", 1)
        step, done, start = made[path], 0, time.perf_counter()
        while time.perf_counter() - start < float(seconds):
            done += step()
        print(done, time.perf_counter() - start, flush=True)


class Worker:
    """A mode's process, driven over its stdin and stdout."""

    def __init__(self, mode: str, args: argparse.Namespace) -> None:
        env = dict(os.environ)
        if mode == "fixed":
            env["BOURRE_THREADS_ADAPT"] = "0"
        if mode == "sleeping":
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        if mode == "short spin":
            env["GOMP_SPINCOUNT"] = str(threads.SHORT_SPIN)
        command = [sys.executable, __file__, "--worker", mode, "--tables", str(args.tables), "--seed", str(args.seed)]
        self.proc = subprocess.Popen(
            [*command, "--paths", *args.paths], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        if self.stdout.readline().strip() != "ready":
            raise SystemExit(f"the {mode!r} worker did not start")

    def run(self, path: str, seconds: float) -> tuple[int, float]:
        self.stdin.write(f"{path} {seconds}\n")
        self.stdin.flush()
        done, taken = self.stdout.readline().split()
        return int(done), float(taken)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def interleaved_rates(workers: dict[str, Worker], path: str, seconds: float, slice_s: float = 0.5) -> dict[str, float]:
    """Units per second of each mode on ``path``, run in turn in slices of ``slice_s`` until each had ``seconds``."""
    done = dict.fromkeys(workers, 0)
    spent = dict.fromkeys(workers, 0.0)
    while min(spent.values()) < seconds:
        for mode, w in workers.items():
            units, taken = w.run(path, slice_s)
            done[mode] += units
            spent[mode] += taken
    return {mode: done[mode] / spent[mode] for mode in workers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--competitors", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS))
    parser.add_argument("--seconds", type=float, default=3.0, help="timing of each mode per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tables", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.paths, args.tables, args.seed)
        return
    if min(args.competitors) < 0 or max(args.competitors) > 8:
        parser.error("--competitors: counts in 0..8")
    if args.seconds <= 0 or args.repeats < 1 or args.tables < 1:
        parser.error("--seconds, --repeats and --tables must be positive")
    many = threads.auto_threads()
    if many < 2:
        parser.error(f"one usable core (affinity {sorted(os.sched_getaffinity(0))}, NUMBA_NUM_THREADS): nothing to do")
    print(f"{time.strftime('%Y-%m-%d %H:%M')}; threads: {many} (the cores this process may use, numba's pool)")
    workers = {mode: Worker(mode, args) for mode in MODES}
    # each count's budget: every repeat of every path runs the modes for args.seconds, plus a margin
    budget = len(args.paths) * args.repeats * len(MODES) * (args.seconds + 1.0) + 30.0
    rows = []
    try:
        for count in args.competitors:
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            print(
                f"\n{count} competitors; nproc {os.cpu_count()}, usable {threads.usable_cores()}, load average {load}"
            )
            with competitors(count, budget):
                for path in args.paths:
                    runs = [interleaved_rates(workers, path, args.seconds) for _ in range(args.repeats)]
                    median = {m: statistics.median(r[m] for r in runs) for m in MODES}
                    spread = {m: (min(r[m] for r in runs), max(r[m] for r in runs)) for m in MODES}
                    line = "  ".join(f"{m} {median[m]:>9,.0f} [{spread[m][0]:,.0f}-{spread[m][1]:,.0f}]" for m in MODES)
                    ratio = median["chooser"] / median["fixed"]
                    slept = median["chooser"] / median["sleeping"]
                    short = median["short spin"] / median["chooser"]
                    print(
                        f"  {path:<22} {line}  chooser/fixed {ratio:.2f}x  chooser/sleeping {slept:.2f}x  "
                        f"short spin/chooser {short:.2f}x",
                        flush=True,
                    )
                    rows.append((count, path, median, spread, ratio, slept, short))
    finally:
        for w in workers.values():
            w.close()
    print(
        "\n| competitors | path | 1 thread | fixed split | sleeping chooser | chooser | short spin "
        "| chooser / fixed | chooser / sleeping | short spin / chooser |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for count, path, median, spread, ratio, slept, short in rows:
        cells = " | ".join(f"{median[m]:,.0f} ({spread[m][0]:,.0f}-{spread[m][1]:,.0f})" for m in MODES)
        print(f"| {count} | {path} | {cells} | {ratio:.2f}x | {slept:.2f}x | {short:.2f}x |")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
