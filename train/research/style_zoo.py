"""Agents against the style zoo: how each candidate does in fields of one habit each, by duplicate evaluation.

    python -m train.research.style_zoo --candidates heuristic ppo --players 3 5 7 --deals 500 --seed 0 --workers 2

The reference agents and the ladder's fields play alike, and a trained agent met mostly its own kind; the styles
of ``agents.styles`` (never passing, playing high, playing low, calling with any trump, waiting for two trumps,
passing at random) are fields it never met. Every (candidate, style, table size) cell is
``train.eval.duplicate.evaluate(candidate, "style:NAME", ...)``'s table: the same deals for every cell of one table
size (``make_deals(seed, rules, deals)``), every deal played with the candidate in each seat and once by the style
alone. Printed: a Markdown table of each cell's table advantage (the candidate's chips per deal minus the other
seats') and replacement advantage (minus the style's own in the same seat), with 95% t-intervals, then each
candidate's weakest cell by table advantage. ``--json PATH`` writes every cell with the command that made it.

``--session K`` plays each of the ``--deals`` games as a session of K deals with the pot carried (``bourre eval
--session K``): the figures stay in chips per deal, the intervals take the session as the unit, and the table also
gives the mean pot left at a session's end and the sessions cut at the pot bound. ``--rule KEY=VALUE`` sets a rule
option at every table (``--rule pot_limit=20``: without a limit, never-passing fields at 5 players and more grow
the pot geometrically, and their cells measure the pot's growth, not play).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from agents.base import AgentError
from agents.styles import STYLES
from train.arguments import rule_option
from train.eval.report import TextTable, markdown_table, with_ci
from train.research.cells_report import report_cells

__all__ = ["Cell", "main", "markdown", "measure"]


@dataclasses.dataclass(frozen=True)
class Cell:
    """One candidate against one style at one table size, chips per deal."""

    candidate: str
    style: str
    players: int
    deals: int  # games: deals, or sessions of ``session`` deals
    advantage: float
    advantage_ci95: tuple[float, float] | None
    replacement_advantage: float
    replacement_advantage_ci95: tuple[float, float] | None
    session: int = 1
    pot_left: float | None = None  # with sessions: chips left in the pot at a session's end, mean over every table
    sessions_cut: int = 0  # with sessions: sessions (of every table's) that the pot bound ended early

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def measure(
    candidates: list[str],
    styles: list[str],
    players: list[int],
    deals: int,
    seed: int,
    workers: int,
    progress: bool,
    session: int = 1,
    rule_options: dict[str, Any] | None = None,
) -> list[Cell]:
    """Every candidate against every style at every table size (``evaluate``'s tables, unchanged), in single deals
    or in sessions of ``session`` deals."""
    from train.eval.duplicate import evaluate

    cells = []
    pairs = [(c, s) for c in candidates for s in styles]
    for candidate, style in tqdm(pairs, desc="candidate x style", unit="pair", disable=not progress):
        report = evaluate(
            candidate,
            f"style:{style}",
            players,
            deals,
            seed,
            workers,
            progress=False,
            session=session,
            rule_options=rule_options,
        )
        for table in report.tables:
            cells.append(
                Cell(
                    candidate,
                    style,
                    table.players,
                    table.deals,
                    table.advantage,
                    table.advantage_ci95,
                    table.replacement_advantage,
                    table.replacement_advantage_ci95,
                    session,
                    table.pot_left,
                    table.sessions_cut,
                )
            )
    return cells


def markdown(cells: list[Cell]) -> list[str]:
    """The table of every cell, then each candidate's weakest cell by table advantage."""
    rows = [
        [
            c.candidate,
            f"style:{c.style}",
            str(c.players),
            str(c.deals) if c.session == 1 else f"{c.deals} x {c.session}",
            with_ci(c.advantage, c.advantage_ci95),
            with_ci(c.replacement_advantage, c.replacement_advantage_ci95),
        ]
        for c in cells
    ]
    games = "deals" if all(c.session == 1 for c in cells) else "sessions x deals"
    headers = ["candidate", "field", "players", games, "table advantage [95%]", "replacement advantage [95%]"]
    right = [False, False, True, True, True, True]
    if games != "deals":
        headers += ["pot left", "cut"]
        right += [True, True]
        for row, c in zip(rows, cells, strict=True):
            row += ["" if c.pot_left is None else f"{c.pot_left:,.1f}", str(c.sessions_cut)]
    lines = markdown_table(TextTable(headers, right, rows))
    for candidate in dict.fromkeys(c.candidate for c in cells):
        weakest = min((c for c in cells if c.candidate == candidate), key=lambda c: c.advantage)
        advantage = with_ci(weakest.advantage, weakest.advantage_ci95)
        lines.append(
            f"\n{candidate}'s weakest cell: style:{weakest.style} at {weakest.players} players, "
            f"table advantage {advantage}"
        )
    return lines


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m train.research.style_zoo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", nargs="+", default=["heuristic", "ppo"], help="agent specs rated")
    parser.add_argument("--styles", nargs="+", default=list(STYLES), help=f"styles of the fields ({', '.join(STYLES)})")
    parser.add_argument("--players", type=int, nargs="+", default=[3, 5, 7], help="table sizes")
    parser.add_argument("--deals", type=int, default=500, help="deals per cell")
    parser.add_argument("--session", type=int, default=1, help="deals a session, the pot carried (default: 1)")
    parser.add_argument(
        "--rule", type=rule_option, action="append", default=[], metavar="KEY=VALUE", help="a rule option (repeatable)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals and the agents")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: every CPU)")
    parser.add_argument("--json", type=Path, default=None, help="write every cell here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.deals < 1 or args.workers < 1:
        parser.error("--deals and --workers take positive integers")
    if any(not 2 <= n <= 8 for n in args.players):
        parser.error(f"--players: table sizes between 2 and 8, got {args.players}")
    unknown = [s for s in args.styles if s not in STYLES]
    if unknown:
        parser.error(f"--styles: unknown {', '.join(unknown)}; known: {', '.join(STYLES)}")
    command = "python -m train.research.style_zoo " + shlex.join(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    try:
        cells = measure(
            candidates=args.candidates,
            styles=args.styles,
            players=args.players,
            deals=args.deals,
            seed=args.seed,
            workers=args.workers,
            progress=not args.no_progress,
            session=args.session,
            rule_options=dict(args.rule),
        )
    except (ValueError, AgentError) as err:
        print(f"style_zoo: error: {err}", file=sys.stderr)
        return 2
    report_cells(
        markdown(cells),
        cells,
        command,
        time.perf_counter() - started,
        args.json,
        {"seed": args.seed, "session": args.session, "rules": dict(args.rule)},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
