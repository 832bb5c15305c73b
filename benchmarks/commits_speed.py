"""This checkout's threaded hot paths against earlier commits, alternated in one run on one machine.

    python benchmarks/commits_speed.py --against 821ed84 8f09907 df288b3 --seconds 4 --repeats 3

Each commit named by ``--against`` is exported (``git archive``) into a temporary folder (removed at the end) and gets a
worker process of its own, which puts that tree first on ``sys.path`` and checks that ``bourre_env`` came from it;
this checkout gets one too. Every worker builds, on ``--tables`` tables at ``--players`` players, the paths its
commit has:

* ``vector env T``: ``BourreVectorEnv(threads=T)`` with batched heuristic opponents from the state rows and random
  legal learner actions (learner steps/s), ``T`` the cores this process may use;
* ``vector env 1``: the same on one thread;
* ``random_play 1`` and ``random_play T``: ``BatchGame.random_play(50)`` (random legal decisions/s, long calls), on
  one thread and on ``T`` (a commit whose ``BatchGame`` has no ``threads`` has the first only).

The workers then take turns in half-second slices, path by path, until each had ``--seconds`` per repeat, so that a
change of the machine's load falls on all of them alike; each row prints every commit's median over the repeats,
their range, and the ratio of this checkout to each commit. The first run of a commit compiles its kernels (minutes
on 2 cores, before the timing; cached after under the hash of its sources). The load average is printed before and
after: the figures mean what they say on a quiet machine (a load near 0 before the run).
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
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATHS = ("vector env T", "vector env 1", "random_play 1", "random_play T")


def steppers(tables: int, players: int, threads: int, seed: int) -> dict[str, Callable[[], int]]:
    """The paths the tree first on ``sys.path`` has, each a call that does some work and returns its units."""
    import numpy as np

    from bourre_env.batch import BatchGame

    made: dict[str, Callable[[], int]] = {}

    def random_play(n: int) -> Callable[[], int] | None:
        try:
            game = BatchGame(tables, seed=seed, num_players=players, threads=n)
        except (TypeError, ValueError):  # a BatchGame before threads: an unknown keyword or rule option
            if n != 1:
                return None
            game = BatchGame(tables, seed=seed, num_players=players)

        def play() -> int:
            game.random_play(50)
            return tables * 50

        return play

    for n, name in ((1, "random_play 1"), (threads, "random_play T")):
        step = random_play(n)
        if step is not None:
            made[name] = step
    try:
        from agents.batched_players import BatchedHeuristicPlayer, BatchedRandomPlayer
        from bourre_env import BourreVectorEnv
    except ImportError:  # a commit before the vector env
        return made

    def vector_env(n: int) -> Callable[[], int]:
        env = BourreVectorEnv(tables, BatchedHeuristicPlayer("default", 0), num_players=players, threads=n)
        env.reset(seed=seed)
        learner = BatchedRandomPlayer(seed)
        rows = np.arange(tables)

        def step() -> int:
            masks = env.action_masks().view(np.int8)
            env.step(learner.act_batch(masks, masks, rows))
            return tables

        return step

    made["vector env T"] = vector_env(threads)
    made["vector env 1"] = vector_env(1)
    return made


def worker(tree: str, tables: int, players: int, seed: int) -> None:
    """One commit's process: its paths warmed up, ``ready`` and their names joined by ``|``, then ``PATH SECONDS``
    lines on stdin, each answered with the units done and the seconds taken; an empty line ends it."""
    sys.path.insert(0, tree)
    import bourre_env

    if not Path(bourre_env.__file__).resolve().is_relative_to(Path(tree).resolve()):
        raise SystemExit(f"bourre_env came from {bourre_env.__file__}, not from {tree}")
    threads = min(len(os.sched_getaffinity(0)), int(os.environ["NUMBA_NUM_THREADS"]))
    made = steppers(tables, players, threads, seed)
    for step in made.values():
        step()  # compiled and warm
    print("|".join(["ready", *made]), flush=True)
    for line in sys.stdin:
        if not line.strip():
            break
        path, seconds = line.rsplit(" ", 1)
        step, done, start = made[path], 0, time.perf_counter()
        while time.perf_counter() - start < float(seconds):
            done += step()
        print(done, time.perf_counter() - start, flush=True)


class Worker:
    """A commit's process, driven over its stdin and stdout."""

    def __init__(self, label: str, tree: Path, args: argparse.Namespace) -> None:
        command = [sys.executable, __file__, "--worker", str(tree), "--tables", str(args.tables)]
        command += ["--players", str(args.players), "--seed", str(args.seed)]
        self.label = label
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        first = self.stdout.readline().strip().split("|")
        if first[0] != "ready":
            raise SystemExit(f"the worker of {label} did not start (its error is above)")
        self.paths = set(first[1:])

    def run(self, path: str, seconds: float) -> float:
        self.stdin.write(f"{path} {seconds}\n")
        self.stdin.flush()
        done, taken = self.stdout.readline().split()
        return float(done) / float(taken)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def resolved(commit: str) -> str:
    """The commit's full hash, or a one-line error naming what git did not find."""
    found = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        raise SystemExit(f"--against: {commit!r} is no commit of this repository")
    return found.stdout.strip()


def interleaved(workers: list[Worker], path: str, seconds: float, slice_s: float = 0.5) -> dict[str, float]:
    """Units per second of each worker that has ``path``, in turns of ``slice_s`` until each had ``seconds``."""
    rates: dict[str, list[float]] = {w.label: [] for w in workers if path in w.paths}
    for _ in range(max(1, round(seconds / slice_s))):
        for w in workers:
            if path in w.paths:
                rates[w.label].append(w.run(path, slice_s))
    return {label: statistics.fmean(r) for label, r in rates.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", nargs="+", default=["821ed84"], help="commits to time this checkout against")
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS))
    parser.add_argument("--seconds", type=float, default=4.0, help="timing of each commit per path and repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tables", type=int, default=1024)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.tables, args.players, args.seed)
        return
    if args.seconds <= 0 or args.repeats < 1 or args.tables < 1:
        parser.error("--seconds, --repeats and --tables must be positive")
    if not 2 <= args.players <= 8:
        parser.error("--players: 2..8")
    commits = {c: resolved(c) for c in args.against}
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{time.strftime('%Y-%m-%d %H:%M')}; usable cores {len(os.sched_getaffinity(0))}; load average {load}")
    with tempfile.TemporaryDirectory(prefix="commits_speed_") as scratch:
        trees: dict[str, Path] = {"this checkout": ROOT}
        for name, full in commits.items():
            tree = Path(scratch) / full[:12]
            tree.mkdir()
            # an exported tree, not a worktree: reading the repository only leaves nothing behind in .git if killed
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", full], check=True, capture_output=True)
            subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
            trees[name] = tree
        workers: list[Worker] = []
        try:
            workers = [Worker(label, tree, args) for label, tree in trees.items()]
            rows = []
            for path in args.paths:
                runs = [interleaved(workers, path, args.seconds) for _ in range(args.repeats)]
                labels = [w.label for w in workers if path in w.paths]
                median = {label: statistics.median(r[label] for r in runs) for label in labels}
                spread = {label: (min(r[label] for r in runs), max(r[label] for r in runs)) for label in labels}
                cells = "  ".join(f"{label} {median[label]:>11,.0f}" for label in labels)
                print(f"  {path:<14} {cells}", flush=True)
                rows.append((path, labels, median, spread))
        finally:
            for w in workers:
                w.close()
    print("\n| path | commit | median (range) per second | this checkout / commit |")
    print("|---|---|---:|---:|")
    for path, labels, median, spread in rows:
        ours = median.get("this checkout")
        for label in labels:
            ratio = f"{ours / median[label]:.2f}x" if ours and label != "this checkout" else ""
            cell = f"{median[label]:,.0f} ({spread[label][0]:,.0f}-{spread[label][1]:,.0f})"
            print(f"| {path} | {label} | {cell} | {ratio} |")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
