"""The hardest cinch questions known, one by one: the exhaustive search's nodes, time and table, depth by depth.

Reads ``tests/golden/cinch_past_the_guard.json`` (positions where the exact search once ran past its wall-clock
guard) and asks each position's cinch twice: as the env does (``has_cinch_with``: bounds, probes, then the
search) and by the exhaustive search alone (``cinch_search.traced_refuting_line``), which also counts, per depth
of the search, the nodes entered, table hits, nodes the bounds settle and table entries stored.

Usage
-----
::

    python benchmarks/cinch_hard.py                  # every position, a 60 s limit per question
    python benchmarks/cinch_hard.py --limit 5 --depths
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import json
import time
from pathlib import Path

import numpy as np

import bourre_env
from bourre_env import core
from bourre_env.core import cinch_search
from bourre_env.core.rules import Rules

GOLDEN = Path(preamble.REPO_ROOT) / "tests" / "golden" / "cinch_past_the_guard.json"


def positions(path: Path = GOLDEN) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """(state, rule parameters, seat) of every position of the golden file."""
    data = json.loads(path.read_text())
    params = bourre_env.BatchGame(1, seed=0, rules=Rules.from_options(**data["rules"])).params
    return [(np.array(pos["state"], dtype=np.int64), params, int(pos["seat"])) for pos in data["positions"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=float, default=60.0, help="wall-clock limit of one question, seconds")
    parser.add_argument("--depths", action="store_true", help="print the search's counters depth by depth")
    args = parser.parse_args()
    cases = positions()
    warm = core.new_scratch()
    warm[core.X_CINCH_LIMIT_US] = int(args.limit * 1e6)
    s, p, seat = cases[0]
    # loads the compiled kernels before anything is timed (a cold cache compiles them here)
    core.has_cinch_with(s.copy(), p, (seat + 1) % int(p[core.P_NUM_PLAYERS]), warm)
    cinch_search.traced_refuting_line(s, p, seat, warm, np.zeros((0, 4), dtype=np.int64))
    for i, (s, p, seat) in enumerate(cases):
        x = core.new_scratch()
        x[core.X_CINCH_LIMIT_US] = int(args.limit * 1e6)
        start = time.perf_counter()
        try:
            answer = str(bool(core.has_cinch_with(s, p, seat, x)))
        except RuntimeError:
            answer = "past the limit"
        spent = time.perf_counter() - start
        print(f"position {i}: has_cinch {answer}, {int(x[core.X_CINCH_NODES]):,} nodes, {spent * 1e3:.2f} ms")
        trace = np.zeros((int(s[core.S_NACTIVE]) * 13 + 2, 4), dtype=np.int64)
        x = core.new_scratch()
        x[core.X_CINCH_LIMIT_US] = int(args.limit * 1e6)
        start = time.perf_counter()
        try:
            found, line = cinch_search.traced_refuting_line(s, p, seat, x, trace)
            answer = f"refuted by a line of {len(line)} plays" if found else "a cinch"
        except RuntimeError:
            answer = "past the limit"
        spent = time.perf_counter() - start
        print(f"  exhaustive search alone: {answer}, {int(trace[:, 0].sum()):,} nodes, {spent * 1e3:.2f} ms")
        if args.depths:
            print("  depth    nodes     hits   settled   stored")
            for d, (nodes, hits, settled, stored) in enumerate(trace):
                if nodes:
                    print(f"  {d:5d} {nodes:8d} {hits:8d} {settled:9d} {stored:8d}")


if __name__ == "__main__":
    main()
