"""The ceiling in each field: a trained best response's gain over the field's own player, beside the shipped
agent's, and the share of it the agent captures.

    python -m train.research.ceiling --fields heuristic --players 3 5 7 --sessions 1 20 \\
        --session-rule pot_limit=20 --steps 4000000 --seed 857 --workers 1 --json runs/ceiling/heuristic.json

Every cell is one field (``heuristic``, ``style:NAME``, any spec ``bourre exploit --agent`` freezes), one table size
and one session length (1: single deals; K: sessions of K deals with the pot carried, ``--session-rule`` added to
``--rule``'s options there). In each, ``train.research.exploiter.exploit`` trains a best response to the field for
``--steps`` learner decisions (``--session-steps`` in a session cell; seed ``--seed``) and plays it against the
field on ``--deals`` games (``--session-deals`` sessions in a session cell) of seed ``--seed`` + 1: its *gain* is
its replacement advantage, its chips per deal in a seat minus the field's own player's
in that seat. The candidate (default ``ppo``) is judged on the very same games (``train.eval.duplicate.evaluate``,
same seed, same rules): its gain the same way. The *capture ratio* is the candidate's gain over the best response's.

Its 95% interval is the delta method's, from the two gains' intervals taken as independent: both are measured on the
same deals and move together, so the true interval is narrower, and this one is conservative. It is given only
where the best response's own interval is above zero (else the ratio has no bound). A best response that PPO finds
in a fixed budget is a lower bound on the true one: where its gain is below the candidate's, the candidate itself
is the better response found, the cell says so, and its ratio (above 1) says only that the budget was too small.

Each cell's run folder (``--run-root``/``FIELD_Np_sK``) keeps the exploiter's run and ``exploit.json``; with
``--reuse`` a cell whose ``exploit.json`` was made with the same field, steps, seed, session and rules is read back
instead of trained again (a grid run in pieces, then printed whole). Printed: a Markdown table per table size; the
JSON (``--json``) holds every cell with the command.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from train.arguments import rule_option
from train.eval.report import TextTable, markdown_table, with_ci
from train.research.cells_report import report_cells

__all__ = ["Cell", "capture_ratio", "main", "markdown", "measure"]

Z95 = 1.959963984540054


@dataclasses.dataclass(frozen=True)
class Cell:
    """One field at one table size and session length: the best response's gain and the candidate's, chips/deal."""

    field: str
    players: int
    session: int
    games: int  # deals, or sessions of ``session`` deals
    steps: int
    best_response: float
    best_response_ci95: tuple[float, float] | None
    candidate: str
    candidate_gain: float
    candidate_ci95: tuple[float, float] | None
    ratio: float | None
    ratio_ci95: tuple[float, float] | None
    train_seconds: float
    eval_seconds: float

    @property
    def undertrained(self) -> bool:
        """The best response gains less than the candidate: a lower bound, not a ceiling."""
        return self.best_response < self.candidate_gain

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "undertrained": self.undertrained}


def _standard_error(ci: tuple[float, float] | None) -> float:
    return math.nan if not ci else (ci[1] - ci[0]) / (2 * Z95)


def capture_ratio(
    gain: float, gain_ci: tuple[float, float] | None, best: float, best_ci: tuple[float, float] | None
) -> tuple[float | None, tuple[float, float] | None]:
    """``gain / best`` and its delta-method 95% interval (the two taken as independent); the ratio is None where
    ``best`` is not above zero, the interval None where ``best``'s own interval is not above zero."""
    if best <= 0:
        return None, None
    ratio = gain / best
    if not best_ci or not gain_ci or best_ci[0] <= 0:
        return ratio, None
    se = math.hypot(_standard_error(gain_ci), ratio * _standard_error(best_ci)) / best
    return ratio, (ratio - Z95 * se, ratio + Z95 * se)


def _run_dir(root: Path, field: str, players: int, session: int) -> Path:
    return root / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', field)}_{players}p_s{session}"


def _reusable(path: Path, games: int, **wanted: Any) -> bool:
    """Whether ``path`` holds an ``exploit.json`` made with the ``wanted`` settings, judged on ``games`` games."""
    try:
        done = json.loads((path / "exploit.json").read_text())
    except (OSError, ValueError):
        return False
    return all(done.get(k) == v for k, v in wanted.items()) and done["final"]["deals"] == games


def measure(
    fields: list[str],
    players: list[int],
    sessions: list[int],
    steps: int,
    deals: int,
    session_deals: int,
    seed: int,
    run_root: Path,
    session_steps: int | None = None,
    candidate: str = "ppo",
    rule_options: dict[str, Any] | None = None,
    session_rules: dict[str, Any] | None = None,
    workers: int = 1,
    tables: int = 1024,
    imitation_decisions: int = 300_000,
    curve_points: int = 1,
    start_from: str | None = None,
    reuse: bool = False,
    progress: bool = True,
) -> list[Cell]:
    """Every (field, table size, session length) cell, in that order: the exploiter trained (or read back with
    ``reuse``) and the candidate judged on its games. ``session_rules``: rule options of the session cells only, over
    ``rule_options``; ``start_from``: the policy spec the exploiters start from
    (default: the trainer's imitation warm start)."""
    from train.eval.duplicate import evaluate
    from train.research.exploiter import exploit, summary

    cells = []
    grid = [(f, n, k) for f in fields for n in players for k in sessions]
    for i, (field, n, session) in enumerate(grid, 1):
        games = deals if session == 1 else session_deals
        budget = steps if session == 1 or session_steps is None else session_steps
        options = {**(rule_options or {}), **((session_rules or {}) if session > 1 else {})}
        rules = tuple(f"{key}={json.dumps(value)}" for key, value in options.items())
        run_dir = _run_dir(run_root, field, n, session)
        kind = "single deals" if session == 1 else f"sessions of {session}"
        print(f"[{i}/{len(grid)}] {field} at {n} players, {kind}", flush=True)
        settings = {"agent": field, "steps": budget, "seed": seed, "session": session, "rules": list(rules)}
        if reuse and _reusable(run_dir, games, start=start_from or "imitation", **settings):
            result = json.loads((run_dir / "exploit.json").read_text())
            print(f"  read back {run_dir / 'exploit.json'}")
        else:
            result = exploit(
                field,
                n,
                budget,
                seed,
                run_dir,
                deals=games,
                curve_every=max(1, budget // curve_points),
                curve_deals=games,
                tables=tables,
                imitation_decisions=imitation_decisions,
                workers=workers,
                progress=progress,
                overwrite=True,
                command=None,
                session=session,
                rules=rules,
                start_from=start_from,
            )
        print("  " + summary(result))
        started = time.perf_counter()
        report = evaluate(
            candidate,
            field,
            players=(n,),
            deals=games,
            seed=seed + 1,
            workers=workers,
            progress=False,
            session=session,
            rule_options=options,
        )
        table = report.tables[0]
        final = result["final"]
        interval = final["replacement_advantage_ci95"]  # [] for a single game, as exploit.json holds it
        best_ci = (float(interval[0]), float(interval[1])) if interval else None
        gain_ci = table.replacement_advantage_ci95
        ratio, ratio_ci = capture_ratio(table.replacement_advantage, gain_ci, final["replacement_advantage"], best_ci)
        cell = Cell(
            field,
            n,
            session,
            games,
            budget,
            final["replacement_advantage"],
            best_ci,
            candidate,
            table.replacement_advantage,
            gain_ci,
            ratio,
            ratio_ci,
            result["train_seconds"],
            result["eval_seconds"] + round(time.perf_counter() - started, 1),
        )
        print(f"  {candidate}: gain {with_ci(cell.candidate_gain, gain_ci)}; capture ratio {_ratio_text(cell)}")
        cells.append(cell)
    return cells


def _ratio_text(cell: Cell) -> str:
    if cell.ratio is None:
        return "none (the best response gains nothing)"
    if cell.ratio_ci95 is None:
        return f"{cell.ratio:.2f} (no interval: the best response's reaches zero)"
    return f"{cell.ratio:.2f} [{cell.ratio_ci95[0]:.2f}, {cell.ratio_ci95[1]:.2f}]"


def markdown(cells: list[Cell]) -> list[str]:
    """A table per table size: field, games, the best response's gain, the candidate's, the capture ratio."""
    lines: list[str] = []
    for n in dict.fromkeys(c.players for c in cells):
        rows = [
            [
                c.field,
                f"{c.games:,} deals" if c.session == 1 else f"{c.games:,} sessions of {c.session}",
                f"{c.steps:,}",
                with_ci(c.best_response, c.best_response_ci95),
                with_ci(c.candidate_gain, c.candidate_ci95),
                _ratio_text(c),
                "best response below the candidate: a lower bound" if c.undertrained else "",
            ]
            for c in cells
            if c.players == n
        ]
        candidate = cells[0].candidate
        headers = ["field", "games", "steps", "best response gain [95%]", f"{candidate} gain [95%]", "capture", "note"]
        lines.append(f"\n{n} players\n")
        lines += markdown_table(TextTable(headers, [False, True, True, True, True, True, False], rows))
    return lines


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m train.research.ceiling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--fields", nargs="+", default=["heuristic"], help="fields: heuristic, style:NAME, ...")
    parser.add_argument("--players", type=int, nargs="+", default=[3, 5, 7], help="table sizes")
    parser.add_argument(
        "--sessions", type=int, nargs="+", default=[1], help="deals a game: 1, single deals; K, sessions of K deals"
    )
    parser.add_argument("--steps", type=int, default=2_000_000, help="exploiter training steps per cell")
    parser.add_argument(
        "--session-steps", type=int, default=None, help="exploiter training steps per session cell (default: --steps)"
    )
    parser.add_argument("--deals", type=int, default=2000, help="deals judged per single-deal cell")
    parser.add_argument("--session-deals", type=int, default=200, help="sessions judged per session cell")
    parser.add_argument("--candidate", default="ppo", help="the agent whose capture ratio is measured")
    parser.add_argument(
        "--rule",
        type=rule_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rule option of every cell (repeatable)",
    )
    parser.add_argument(
        "--session-rule",
        type=rule_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rule option of the session cells only (--session-rule pot_limit=20: a single deal's pot never "
        "reaches the limit; repeatable)",
    )
    parser.add_argument("--seed", type=int, default=0, help="training seed; the games judged are seed + 1's")
    parser.add_argument("--workers", type=int, default=1, help="evaluation processes (training takes one)")
    parser.add_argument("--tables", type=int, default=1024, help="tables the trainer steps together")
    parser.add_argument("--imitation-decisions", type=int, default=300_000, help="the trainer's warm start")
    parser.add_argument("--curve-points", type=int, default=1, help="learning-curve points per exploiter")
    parser.add_argument(
        "--start-from", metavar="SPEC", default=None, help="the policy the exploiters start from (default: imitation)"
    )
    parser.add_argument("--run-root", type=Path, default=Path("runs/ceiling"), help="the cells' run folders")
    parser.add_argument("--reuse", action="store_true", help="read back cells already trained alike")
    parser.add_argument("--json", type=Path, default=None, help="write every cell here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.session_steps is None:
        args.session_steps = args.steps
    for name in ("steps", "session_steps", "deals", "session_deals", "workers", "tables", "curve_points"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')}: expected at least 1, got {getattr(args, name)}")
    if any(not 2 <= n <= 8 for n in args.players):
        parser.error(f"--players: table sizes between 2 and 8, got {args.players}")
    command = "python -m train.research.ceiling " + shlex.join(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    try:
        cells = measure(
            args.fields,
            args.players,
            args.sessions,
            args.steps,
            args.deals,
            args.session_deals,
            args.seed,
            args.run_root,
            session_steps=args.session_steps,
            candidate=args.candidate,
            rule_options=dict(args.rule),
            session_rules=dict(args.session_rule),
            workers=args.workers,
            tables=args.tables,
            imitation_decisions=args.imitation_decisions,
            curve_points=args.curve_points,
            start_from=args.start_from,
            reuse=args.reuse,
            progress=not args.no_progress,
        )
    except ValueError as err:
        print(f"ceiling: error: {err}", file=sys.stderr)
        return 2
    settings = {"seed": args.seed, "eval_seed": args.seed + 1, "rules": dict(args.rule)}
    settings["session_rules"] = dict(args.session_rule)
    settings["start"] = args.start_from or "imitation"
    report_cells(markdown(cells), cells, command, time.perf_counter() - started, args.json, settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
