"""``BatchGame(threads=T)`` against one thread: random legal decisions per second in long calls.

    NUMBA_NUM_THREADS=2 python benchmarks/batch_threads.py --threads 2 --players 5 7 --repeats 5

For each table size and with and without observations, one ``BatchGame`` per thread count plays
``--decisions`` random decisions per table per call (``random_play``, compiled); the thread counts take
turns call by call, ``--repeats`` times, so that the load of a shared machine falls on them alike. A
call of 400 decisions at 1,024 tables lasts about a quarter of a second: the numba pool's wake-up and the
call's set-up are a few microseconds of it, so what is measured is the stepping itself.
``benchmarks/throughput.py --threads`` measures the same rows among its single-thread figures, with
calls that start at one decision per table and double, short calls that weigh the wake-up more.

Printed per row: the best and the median decisions/s of each thread count, and the ratio of the medians
(2x is the ceiling on 2 cores). First, a calibration: a numba ``prange`` loop of pure arithmetic on each thread
count, the ratio any parallel code could reach on the machine as it is now (1.0x when the other cores are
taken). The games of T threads are those of one thread, decision for decision
(``tests/test_batch_threads.py``), so every count does the same work.
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import os
import statistics
import time

import numba
import numpy as np
from numba import njit, prange

from bourre_env.batch import BatchGame


@njit(parallel=True, cache=True)
def _arithmetic(steps: int, chunks: int) -> np.ndarray:
    out = np.zeros(chunks)
    for c in prange(chunks):
        x = 0.0
        for i in range(steps):
            x += (i * 1.000001) % 7.0
        out[c] = x
    return out


def calibration(counts: list[int], seconds: float = 1.0) -> dict[int, float]:
    """Seconds of the same pure-arithmetic work (one chunk per thread of the largest count) on each count."""
    chunks = max(counts)
    _arithmetic(10, chunks)
    t0 = time.perf_counter()
    _arithmetic(1_000_000, chunks)
    steps = int(1_000_000 * seconds / max(time.perf_counter() - t0, 1e-6))  # about `seconds` on one thread
    taken = {}
    for t in counts:
        numba.set_num_threads(t)
        t0 = time.perf_counter()
        _arithmetic(steps, chunks)
        taken[t] = time.perf_counter() - t0
    numba.set_num_threads(pool_size())
    return taken


def pool_size() -> int:
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[2], help="thread counts compared with 1")
    parser.add_argument("--players", type=int, nargs="+", default=[5, 7])
    parser.add_argument("--tables", type=int, default=1024)
    parser.add_argument("--decisions", type=int, default=400, help="random decisions per table per call")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per thread count and row")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    counts = sorted({1, *args.threads})
    pool = pool_size()
    if max(counts) > pool or min(counts) < 1:
        parser.error(f"--threads: 1..{pool} (NUMBA_NUM_THREADS={pool}; set it before the run)")
    if args.tables < 1 or args.decisions < 1 or args.repeats < 1:
        parser.error("--tables, --decisions and --repeats must be positive")
    print(f"load average {os.getloadavg()[0]:.2f}; {args.tables} tables, {args.decisions} decisions per table per call")
    taken = calibration(counts)
    ratios = ", ".join(f"{t} threads / 1: {taken[1] / taken[t]:.2f}x" for t in counts[1:])
    print(f"calibration, pure arithmetic: {ratios}")
    for players in args.players:
        for with_obs in (False, True):
            games = {
                t: BatchGame(num_players=players, batch_size=args.tables, seed=args.seed, threads=t) for t in counts
            }
            for game in games.values():  # compiles (the parallel kernels the first time: about a minute), warms
                game.random_play(64, with_observations=with_obs)
            rates: dict[int, list[float]] = {t: [] for t in counts}
            for _ in range(args.repeats):
                for t, game in games.items():
                    t0 = time.perf_counter()
                    decisions = game.random_play(args.decisions, with_observations=with_obs)
                    rates[t].append(decisions / (time.perf_counter() - t0))
            base = statistics.median(rates[1])
            row = f"N={players}{' + obs' if with_obs else '      '}"
            for t in counts:
                median = statistics.median(rates[t])
                ratio = "" if t == 1 else f"  {t} threads / 1: {median / base:.2f}x"
                print(f"{row}  T={t}: median {median:>12,.0f}/s  best {max(rates[t]):>12,.0f}/s{ratio}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
