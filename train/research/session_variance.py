"""How the spread of duplicate session results grows with the session's length and the pot limit.

    python -m train.research.session_variance --candidate ppo --field heuristic --players 3 5 7 \\
        --lengths 1 5 10 20 40 --pot-limits none 20 --deals 4000 --seed 613 --workers 2

Without a pot limit every bourré player pays the whole pot into the next deal, so over a session the pot can grow
geometrically and one session's chips can dwarf a hundred others'. Each cell here is
``train.eval.duplicate.evaluate(candidate, field, session=K, rule_options={"pot_limit": L})`` on about ``--deals``
deals in all (``--deals // K`` sessions, at least 2), so that every length spends the same number of deals. Printed
per cell: the replacement advantage with its 95% interval over sessions, the interval's half-width, the
*spread per deal* (the standard deviation of a session's replacement advantage times the square root of its
length: the standard deviation one deal would have if the session's deals were independent, so that lengths
compare, and a single deal's own standard deviation at ``K = 1``), the mean pot left at a session's end and the
sessions the pot bound cut short (of every table's sessions, the all-field table's included). ``--json PATH``
writes every cell with the command that made it.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from agents.base import AgentError
from train.eval.report import TextTable, markdown_table, with_ci
from train.eval.statistics import t_quantile
from train.research.cells_report import report_cells

__all__ = ["Cell", "main", "markdown", "measure"]


@dataclasses.dataclass(frozen=True)
class Cell:
    """The candidate against the field in sessions of ``length`` deals at one table size and pot limit."""

    players: int
    length: int
    pot_limit: int | None
    sessions: int
    replacement_advantage: float
    replacement_advantage_ci95: tuple[float, float] | None
    advantage: float
    advantage_ci95: tuple[float, float] | None
    spread_per_deal: float | None  # sd of a session's replacement advantage x sqrt(length)
    pot_left: float  # mean chips left in the pot at a session's end (NaN for single deals)
    sessions_cut: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _spread(ci: tuple[float, float] | None, sessions: int, length: int) -> float | None:
    """The per-deal spread of a cell, from its t-interval's half-width over ``sessions`` sessions."""
    if ci is None or sessions < 2:
        return None
    half = (ci[1] - ci[0]) / 2
    return half / t_quantile(0.975, sessions - 1) * math.sqrt(sessions) * math.sqrt(length)


def measure(
    candidate: str,
    field: str,
    players: list[int],
    lengths: list[int],
    pot_limits: list[int | None],
    deals: int,
    seed: int,
    workers: int,
    progress: bool,
) -> list[Cell]:
    """Every (table size, length, pot limit) cell (module docstring)."""
    from train.eval.duplicate import evaluate

    cells = []
    grid = [(n, k, limit) for n in players for limit in pot_limits for k in lengths]
    for n, k, limit in tqdm(grid, desc="cells", unit="cell", disable=not progress):
        sessions = max(2, deals // k)
        options = {} if limit is None else {"pot_limit": limit}
        report = evaluate(
            candidate,
            field,
            players=n,
            deals=sessions,
            seed=seed,
            workers=workers,
            progress=False,
            rule_options=options,
            session=k,
        )
        t = report.table(n)
        pot_left = float("nan") if t.pot_left is None else t.pot_left  # single deals report none
        cells.append(
            Cell(
                players=n,
                length=k,
                pot_limit=limit,
                sessions=sessions,
                replacement_advantage=t.replacement_advantage,
                replacement_advantage_ci95=t.replacement_advantage_ci95,
                advantage=t.advantage,
                advantage_ci95=t.advantage_ci95,
                spread_per_deal=_spread(t.replacement_advantage_ci95, sessions, k),
                pot_left=pot_left,
                sessions_cut=t.sessions_cut,
            )
        )
    return cells


def markdown(cells: list[Cell]) -> list[str]:
    """One row per cell."""
    rows = []
    for c in cells:
        ci = c.replacement_advantage_ci95
        rows.append(
            [
                str(c.players),
                "none" if c.pot_limit is None else str(c.pot_limit),
                str(c.length),
                str(c.sessions),
                with_ci(c.replacement_advantage, ci),
                "" if ci is None else f"{(ci[1] - ci[0]) / 2:.3f}",
                with_ci(c.advantage, c.advantage_ci95),
                "" if c.spread_per_deal is None else f"{c.spread_per_deal:.2f}",
                "" if math.isnan(c.pot_left) else f"{c.pot_left:,.1f}",
                str(c.sessions_cut),
            ]
        )
    headers = [
        "players",
        "pot limit",
        "deals a session",
        "sessions",
        "replacement advantage [95%]",
        "half-width",
        "table advantage [95%]",
        "spread per deal",
        "pot left",
        "cut",
    ]
    return markdown_table(TextTable(headers, [True, True, True, True, True, True, True, True, True, True], rows))


def _pot_limit(text: str) -> int | None:
    if text.lower() == "none":
        return None
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a pot limit >= 1 or none, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m train.research.session_variance", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--candidate", default="ppo", help="the agent rated (default: ppo)")
    parser.add_argument("--field", default="heuristic", help="the field (default: heuristic)")
    parser.add_argument("--players", type=int, nargs="+", default=[3, 5, 7], help="table sizes")
    parser.add_argument("--lengths", type=int, nargs="+", default=[1, 5, 10, 20, 40], help="deals a session")
    parser.add_argument("--pot-limits", type=_pot_limit, nargs="+", default=[None, 20], help="pot limits (none)")
    parser.add_argument("--deals", type=int, default=4000, help="deals per cell, in all (default: 4000)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals and the agents")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: every CPU)")
    parser.add_argument("--json", type=Path, default=None, help="write every cell here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.deals < 1 or args.workers < 1 or any(k < 1 or k > 10_000 for k in args.lengths):
        parser.error("--deals and --workers take positive integers, --lengths integers from 1 to 10,000")
    if any(not 2 <= n <= 8 for n in args.players):
        parser.error(f"--players: table sizes between 2 and 8, got {args.players}")
    command = "python -m train.research.session_variance " + shlex.join(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    try:
        cells = measure(
            candidate=args.candidate,
            field=args.field,
            players=args.players,
            lengths=args.lengths,
            pot_limits=args.pot_limits,
            deals=args.deals,
            seed=args.seed,
            workers=args.workers,
            progress=not args.no_progress,
        )
    except (ValueError, AgentError) as err:
        print(f"session_variance: error: {err}", file=sys.stderr)
        return 2
    report_cells(markdown(cells), cells, command, time.perf_counter() - started, args.json, {"seed": args.seed})
    return 0


if __name__ == "__main__":
    sys.exit(main())
