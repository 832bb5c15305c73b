"""What ``train.arena.records.Book.standings()`` costs when one more match settles, after ``--matches`` stored ones.

A temporary SQLite database is filled as a ladder fills it (``--seed``): matches of 3 or 5 players, 10 deals each in
the single format, alternately a reference match (one bot among copies of ``random`` or ``heuristic``, with its
all-field tables) and a peer match, each settled in order. ``Book.standings()`` reads them all once; then, ``--repeat``
times, one more match settles (the newest) and the call is timed. The median and the slowest are printed, with the
number of matches. Run from the repository root::

    PYTHONPATH=$PWD python benchmarks/arena_ratings.py --matches 1000 5000 --seed 0
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

import numpy as np
import sqlalchemy as sa

from train.arena.records import Book, baselines
from train.arena.storage import Store, games, matches
from train.eval.duplicate import CHIPS

FIELDS = ["random", "heuristic"]
SIZES = [3, 5]
BOTS = [f"bot{i}" for i in range(8)]
DEALS = 10


def _rows(number: int, rng: np.random.Generator) -> tuple[dict, list[dict], list[dict]]:
    n = SIZES[number % len(SIZES)]
    seed = int(rng.integers(1 << 40))
    if number % 2:
        seats = [FIELDS[number // 2 % len(FIELDS)]] * n
        seats[int(rng.integers(n))] = f"bot:{BOTS[number % len(BOTS)]}"
    else:
        seats = [f"bot:{b}" for b in rng.choice(BOTS, size=n, replace=False)]
    match_id = f"m{number:07d}"
    report = {
        "results": [{"entry": i, "counts": {"decisions": 40}} for i, s in enumerate(seats) if s.startswith("bot:")]
    }
    match = {
        "id": match_id,
        "created": 1000.0 + number,
        "status": "finished",
        "report": json.dumps(report),
        "request": json.dumps({"seats": seats, "seed": seed, "format": "single", "deals": DEALS}),
    }
    played, tables = [], []
    for k in range(DEALS):
        outcomes = np.zeros((n, 6), dtype=np.int64)
        outcomes[:, CHIPS] = rng.integers(-20, 21, size=n)
        played.append(
            {
                "match_id": match_id,
                "deal": k,
                "rotation": k % n,
                "outcomes": json.dumps(outcomes.tolist()),
                "history": "{}",
            }
        )
        if number % 2:
            outcomes[:, CHIPS] = rng.integers(-20, 21, size=n)
            tables.append(
                {
                    "field": seats[0] if seats[0] in FIELDS else seats[1],
                    "players": n,
                    "seed": seed,
                    "deal": k,
                    "outcomes": json.dumps(outcomes.tolist()),
                    "history": "{}",
                }
            )
    return match, played, tables


def _store(store: Store, first: int, count: int, rng: np.random.Generator) -> None:
    rows = [_rows(number, rng) for number in range(first, first + count)]
    with store.engine.begin() as db:
        db.execute(sa.insert(matches), [m for m, _, _ in rows])
        db.execute(sa.insert(games), [g for _, played, _ in rows for g in played])
        tables = [t for _, _, found in rows for t in found]
        if tables:
            db.execute(sa.insert(baselines), tables)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, nargs="+", default=[1000, 5000], help="stored matches before timing")
    parser.add_argument("--repeat", type=int, default=20, help="matches settled one by one, each timed")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if any(m < 1 or m > 200_000 for m in args.matches) or not 1 <= args.repeat <= 1000:
        parser.error("--matches: 1 to 200000 each; --repeat: 1 to 1000")
    for count in args.matches:
        rng = np.random.default_rng(args.seed)
        with tempfile.TemporaryDirectory() as folder:
            store = Store(folder)
            try:
                _store(store, 0, count, rng)
                book = Book(store, FIELDS, SIZES)
                started = time.perf_counter()
                book.standings()
                first = time.perf_counter() - started
                times = []
                for number in range(count, count + args.repeat):
                    _store(store, number, 1, rng)
                    started = time.perf_counter()
                    standings = book.standings()
                    times.append(time.perf_counter() - started)
                assert standings.matches == count + args.repeat
            finally:
                store.close()
        median, slowest = statistics.median(times) * 1e3, max(times) * 1e3
        print(
            f"{count} matches: first standings() {first * 1e3:.0f} ms; one more settled: median {median:.2f} ms, "
            f"slowest {slowest:.2f} ms ({args.repeat} times)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
