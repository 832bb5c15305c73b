"""A bot's page (``/bots/NAME``) against the size of the arena's history: the query it makes, and the scan it made.

Fills a SQLite database at revision 0005 (before ``match_bots``) with ``--matches`` settled matches of four seats,
three of them drawn from 40 bots (one match in 1,000 seats a rare bot), eight games each; opens it as a server does
(the migration to the newest revision fills ``match_bots``: its time is printed), then times, for a busy bot, the
rare one and a name that sat in no match, the page's query (``records.bot_matches``: the newest 200 of the bot's
matches by the index of ``match_bots``) against its peer, the query the page made before revision 0006 (every
settled match whose request contains ``"bot:NAME"``, sorted by date, each with its games counted). Both return the
same matches; times are the best of ``--repeats``, in the same run.

Usage
-----
::

    python benchmarks/arena_bot_page.py                       # 200,000 matches
    python benchmarks/arena_bot_page.py --matches 20000 --seed 0
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from train.arena.records import bot_matches
from train.arena.storage import DB_FILE, Store, games, matches, migrate

SETTLED = ("finished", "aborted", "interrupted")
BOTS = 40


def fill(folder: Path, count: int, seed: int) -> None:
    """``count`` settled matches in a new database at revision 0005, as a server of that version stored them."""
    engine = sa.create_engine(f"sqlite:///{folder / DB_FILE}")
    migrate(engine, "0005")
    rng = random.Random(seed)
    names = [f"bot{i}" for i in range(BOTS)]
    with engine.begin() as db:
        for first in range(0, count, 10_000):
            match_rows, game_rows = [], []
            for m in range(first, min(first + 10_000, count)):
                seats = [f"bot:{n}" for n in rng.sample(names, 3)] + ["heuristic"]
                if m % 1000 == 0:
                    seats[0] = "bot:rare"
                request = {"seats": seats, "players": 4, "deals": 2, "seed": m, "clock": 1.0, "grace": 1.0}
                match_id = f"{m:016x}"
                match_rows.append(
                    {
                        "id": match_id,
                        "created": 1.7e9 + m,
                        "request": json.dumps(request),
                        "status": SETTLED[m % 3],
                        "report": None,
                    }
                )
                game_rows += [
                    {"match_id": match_id, "deal": g // 4, "rotation": g % 4, "outcomes": "[]", "history": "{}"}
                    for g in range(8)
                ]
            db.execute(sa.insert(matches), match_rows)
            db.execute(sa.insert(games), game_rows)
    engine.dispose()


def scanned(store: Store, name: str, limit: int = 200) -> list[dict[str, Any]]:
    """The page's query before revision 0006: a search of every settled match's request for the bot's name."""
    needle = json.dumps(f"bot:{name}")
    count = sa.select(sa.func.count()).select_from(games).where(games.c.match_id == matches.c.id)
    query = (
        sa.select(matches.c.id, matches.c.created, matches.c.status, matches.c.request, count.scalar_subquery())
        .where(matches.c.status.in_(SETTLED), matches.c.request.contains(needle, autoescape=True))
        .order_by(matches.c.created.desc(), matches.c.id.desc())
    )
    found = []
    with store.engine.connect() as db:
        for match_id, created, status, request, played in db.execute(query):
            body = json.loads(request)
            if f"bot:{name}" in body["seats"]:
                found.append(
                    {
                        "match": match_id,
                        "created": float(created),
                        "status": status,
                        "seats": body["seats"],
                        "seed": body.get("seed"),
                        "games": int(played),
                        "format": body.get("format", "rotations"),
                    }
                )
            if len(found) >= limit:
                break
    return found


def best_seconds(work: Any, repeats: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=200_000, help="settled matches stored")
    parser.add_argument("--seed", type=int, default=0, help="seeds the bots drawn for each match")
    parser.add_argument("--repeats", type=int, default=5, help="times each query is run (the best is printed)")
    args = parser.parse_args()
    if not 1 <= args.matches <= 10_000_000 or not 1 <= args.repeats <= 100:
        parser.error("--matches must be in 1..10,000,000 and --repeats in 1..100")
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        fill(Path(folder), args.matches, args.seed)
        print(f"{args.matches:,} matches stored in {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        store = Store(folder)
        print(f"migrated to the newest revision (match_bots filled) in {time.perf_counter() - start:.1f} s")
        try:
            for name in ("bot1", "rare", "nobody"):
                indexed, listed = best_seconds(lambda n=name: bot_matches(store, n), args.repeats)
                scan, peer = best_seconds(lambda n=name: scanned(store, n), args.repeats)
                if listed != peer:
                    raise SystemExit(f"{name}: the page's query and the scan listed different matches")
                print(
                    f"{name}: {len(listed)} matches listed; page {indexed * 1e3:.1f} ms, scan {scan * 1e3:.1f} ms "
                    f"({scan / indexed:.0f}x)"
                )
        finally:
            store.close()


if __name__ == "__main__":
    main()
