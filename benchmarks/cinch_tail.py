"""The slow tail of the cinch in random play: how often one question takes longer than a limit, at engine speed.

``benchmarks/cinch_budget.py`` asks every question of some thousands of deals, a few hundred thousand decisions:
too few to meet a question that comes once in tens of millions. This one runs ``BatchGame.random_play`` (compiled,
about a million decisions a second at 8 players on one core) with a wall-clock limit on every cinch question
(``core.X_CINCH_LIMIT_US``, which makes the search raise past it); when a call raises, the rows are replayed one
decision at a time from the call's start to find the question, which is written to ``--out``, and the tables are
dealt anew on the next seed.

Usage
-----
::

    python benchmarks/cinch_tail.py --players 8 --seconds 420 --limit-ms 50 --seed 0
    python benchmarks/cinch_tail.py --players 7 --seconds 300 --out runs/cinch_tail_7p.json
    python benchmarks/cinch_tail.py --players 3 --ranks 6 --seconds 300
    python benchmarks/cinch_tail.py --players 8 --max-discard 4 --seconds 300   # the stock runs out more often

The rate comes with an exact Poisson 95% interval. Questions over the limit are counted, not timed: each is left
unanswered at the limit (``cinch_hard.py`` times a position to its end).
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from bourre_env import core
from bourre_env.batch import BatchGame

CALL_DECISIONS = 20  # decisions of a row per random_play call: the replay after a raise walks at most these


def poisson_at_most(k: int, mean: float) -> float:
    """P(X <= k) for a Poisson X of ``mean``."""
    term = total = math.exp(-mean)
    for i in range(1, k + 1):
        term *= mean / i
        total += term
    return total


def poisson_interval(k: int, level: float = 0.95) -> tuple[float, float]:
    """Exact (Garwood) interval of a Poisson count ``k``: the means at which ``k`` or more, and ``k`` or fewer,
    happen with probability ``(1 - level) / 2`` each."""
    tail = (1.0 - level) / 2

    def mean_where(j: int, target: float) -> float:  # P(X <= j) falls as the mean grows: bisect for the target
        lo, hi = 0.0, 10.0 * j + 50.0
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if poisson_at_most(j, mid) > target else (lo, mid)
        return (lo + hi) / 2

    low = 0.0 if k == 0 else mean_where(k - 1, 1.0 - tail)
    return low, mean_where(k, tail)


def fresh(tables: int, rules: dict[str, int], seed: int, limit_us: int) -> BatchGame:
    game = BatchGame(tables, seed=seed, **rules)
    game.scratch[:, core.X_CINCH_LIMIT_US] = limit_us
    return game


def find_question(
    start: tuple[np.ndarray, np.ndarray, np.ndarray], rules: dict[str, int]
) -> tuple[np.ndarray, int] | None:
    """The (state, seat) of the first question over the limit in a call that started at ``start`` (states, random
    streams, scratch), found by replaying each row alone, one decision at a time."""
    states, rngs, scratch = start
    for b in range(states.shape[0]):
        row = BatchGame(1, seed=0, **rules)
        row.states[0], row._rngs[0], row.scratch[0] = states[b], rngs[b], scratch[b]
        for _ in range(CALL_DECISIONS):
            before = row.states[0].copy()
            try:
                row.random_play(1)
            except RuntimeError:
                return before, int(before[core.S_CUR])
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument("--ranks", type=int, default=13, help="ranks per suit, the highest kept (6: 9 to ace)")
    parser.add_argument("--max-discard", type=int, help="the most cards one player may discard (default: no limit)")
    parser.add_argument("--tables", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=300.0, help="wall-clock time of the run")
    parser.add_argument("--limit-ms", type=float, default=50.0, help="a question slower than this is counted")
    parser.add_argument("--seed", type=int, default=0, help="the first tables' seed; each raise moves to the next")
    parser.add_argument("--out", type=Path, help="a JSON file for the positions found")
    args = parser.parse_args()
    if not 2 <= args.players <= 8 or args.tables < 1 or args.seconds <= 0 or args.limit_ms <= 0:
        parser.error("--players 2-8, --tables >= 1, --seconds and --limit-ms > 0")
    if args.players * 5 > 4 * args.ranks or not 2 <= args.ranks <= 13:
        parser.error(f"--ranks: 2-13, and enough cards for {args.players} hands of 5")
    if args.max_discard is not None and not 1 <= args.max_discard <= 5:
        parser.error("--max-discard: 1-5")
    rules = {"num_players": args.players, "ranks": args.ranks}
    if args.max_discard is not None:
        rules["max_discard"] = args.max_discard
    limit_us = int(args.limit_ms * 1000)
    seed = args.seed
    game = fresh(args.tables, rules, seed, limit_us)
    game.random_play(1)  # compiles (or loads) the kernel before the clock starts
    found: list[dict[str, object]] = []
    decisions = 0
    began = time.perf_counter()
    last_report = began
    while time.perf_counter() - began < args.seconds:
        start = (game.states.copy(), game._rngs.copy(), game.scratch.copy())
        try:
            decisions += game.random_play(CALL_DECISIONS)
        except RuntimeError:
            hit = find_question(start, rules)
            if hit is not None:
                state, seat = hit
                found.append({"state": state.tolist(), "seat": seat, "seed": seed})
            seed += 1
            game = fresh(args.tables, rules, seed, limit_us)
        now = time.perf_counter()
        if now - last_report > 30:
            print(f"{now - began:5.0f} s: {decisions:,} decisions, {len(found)} over {args.limit_ms:g} ms", flush=True)
            last_report = now
    low, high = poisson_interval(len(found))
    per = 1e8 / max(decisions, 1)
    print(
        f"{args.players} players, {args.ranks} ranks, "
        + (f"{args.max_discard} discards at most, " if args.max_discard is not None else "")
        + f"{args.tables} tables, seeds {args.seed}-{seed}: "
        f"{decisions:,} random decisions in {time.perf_counter() - began:.0f} s; {len(found)} questions over "
        f"{args.limit_ms:g} ms, "
        + f"{len(found) * per:.2f} per 100 million decisions [95% CI {low * per:.2f}, {high * per:.2f}]"
    )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "players": args.players,
            "ranks": args.ranks,
            "max_discard": args.max_discard,
            "limit_ms": args.limit_ms,
            "decisions": decisions,
            "positions": found,
        }
        args.out.write_text(json.dumps(payload) + "\n")


if __name__ == "__main__":
    main()
