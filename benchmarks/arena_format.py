"""What playing each deal once costs the arena's ladder rating in precision: today's rotations against the
single-deal format with par games, for the same bots and the same number of their games.

A *cell* is a candidate against a reference field ``F`` at ``N`` players, as in the ladder (``docs/arena.md``, "The
ladder"). For each cell, with a budget of ``G`` games of the candidate (``--games``), the script plays, offline (no
server), the games of each format and rates the candidate as the arena would:

====  ==================================================================================================================
(a)   *Today's rotations.* ``G // N`` deals, each played in all ``N`` rotations (entry ``i`` in seat ``(i + r) % N``
      of rotation ``r``, the candidate entry 0), and once at the *all-field table* (``F`` in every seat). Per deal the
      replacement advantage: the candidate's chips over its ``N`` seats minus the all-field table's chips over all
      seats, over ``N`` (``train.eval.duplicate.TableReport``, the formula of ``train.arena.ratings``).
(b)   *The single-deal format.* ``G`` deals, each played once: deal ``k`` seats entry ``i`` at seat ``(i + k) % N``,
      so the candidate sits at seat ``s = k % N``; each game is paired with its *par game*, the same deal with ``F``
      in every seat. Per deal the score is the candidate's chips at seat ``s`` minus ``F``'s at seat ``s`` in the par
      game. Same expectation as (a).
(b')  (b) with the field's copies at the candidate's table seeded as the par game's agents of the same seats (built
      for the deal): a choice the server could make at no cost, since it seeds both tables; it ties the field's own
      random choices at the two tables together. In the JSON, and in the ratio column ``b'/a``.
(c)   (b) without the pairing: the candidate's chips minus the field's mean chips per seat in the par game (all
      seats), the interval of two independent samples (the par games as if on other deals). Same expectation; what
      the pairing buys is the gap between (c) and (b).
(d)   ``--aivat``: (a) and (b) with the project's control variates at the draws (``train.eval.variance``, ``bourre
      eval --aivat``; the heuristic's rollouts, 32 a term). They apply to a single game and its par game as they do
      to a rotation and the all-field table: the correction is per game, summed over its draws, and the two games of
      a pair share the deal (``VarianceReduced.of`` with one game per deal). About 10 ms of rollouts per game pair.
====  ==================================================================================================================

Every interval is the 95% t-interval with the deal as the unit (``train.eval.statistics.t_interval``). The seats
are seeded as the arena seeds them: the entries of a match (the candidate and the field's copies) once per match,
by entry, and kept for its deals (``train.arena.match``); the all-field table and the par game by the deal
(``train.arena.scheduler.play_baselines``), so deal ``k``'s par game is deal ``k``'s all-field table. A match is
``--match-deals`` deals of (a) (the ladder's default, 10) and as many games of the candidate in (b). Both formats use
the deals of ``--seed`` (``train.eval.duplicate.make_deals``): (a) the first ``G // N`` of (b)'s ``G``.

The table gives, per cell, the candidate's games and decisions in (a) and (b) (counted as it acts), each format's
mean and the half-width of its interval (chips per deal), and ``b/a``, the ratio of the half-widths; ``b/a per
decision`` scales it to the same number of the candidate's decisions (half-widths go as one over the square root of
the decisions). A second table gives each candidate's rating over the cells measured (their mean, with the ladder's
conservative interval, ``train.eval.ladder.LadderCard``) in both formats.

Usage::

    python benchmarks/arena_format.py --aivat --workers 2 --json runs/arena_format.json
    python benchmarks/arena_format.py --quick             # two cells, a few dozen games each (the test)
    python benchmarks/arena_format.py --candidates ppo --fields heuristic --players 5 --games 1050
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import dataclasses
import json
import math
import multiprocessing
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from machine import machine_info, machine_line

import bourre_env
from train.eval.duplicate import CHIPS, TableReport, agent_seed, build_agent, make_deals, play_deal, table_rules
from train.eval.ladder import Cell, LadderCard
from train.eval.report import TextTable, markdown_table
from train.eval.statistics import t_interval, t_quantile
from train.eval.variance import Draw, DrawCorrector, VarianceReduced, VarianceReduction

CANDIDATES = ("random", "heuristic:loose", "heuristic:tight", "ppo")
FIELDS = ("heuristic", "random")
PLAYERS = (3, 5, 7)
GAMES = 630
"""The default budget of the candidate's games per cell: a multiple of 3, 5 and 7, so (a) plays every one of them."""
MATCH_DEALS = 10
"""Deals of a match of (a), the ladder's ``--ladder-deals``; a match of (b) has as many games of the candidate."""
QUICK = {"candidates": ["random", "heuristic:tight"], "fields": ["random"], "players": [3], "games": 30}

# Seed keys of the entries of a match (after the seed, N and the match) and of the control variates' draws.
ROTATIONS, SINGLE, SINGLE_PAR_SEEDED = 1, 2, 3


Interval = tuple[float, float] | None


@dataclasses.dataclass(frozen=True)
class CellJob:
    candidate: str
    field: str
    players: int
    games: int
    seed: int
    match_deals: int
    aivat: bool


class Counted:
    """The candidate, counting its decisions."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.decisions = 0
        self.name = getattr(agent, "name", type(agent).__name__)

    def act(self, observation: Any) -> Any:
        self.decisions += 1
        return self.agent.act(observation)

    def reset(self) -> None:
        reset = getattr(self.agent, "reset", None)
        if callable(reset):
            reset()


def _half(ci: Interval) -> float:
    return 0.0 if ci is None else (ci[1] - ci[0]) / 2


def _figure(mean: float, ci: Interval) -> dict[str, Any]:
    return {"mean": mean, "ci95": ci, "half_width": _half(ci)}


def _of(values: np.ndarray) -> dict[str, Any]:
    return _figure(float(values.mean()), t_interval(values))


def unpaired(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """mean(x) - mean(y) with the 95% interval of two independent samples (Welch's degrees of freedom)."""
    vx, vy = float(x.var(ddof=1)) / x.size, float(y.var(ddof=1)) / y.size
    mean = float(x.mean() - y.mean())
    if vx + vy == 0:
        return _figure(mean, (mean, mean))
    df = (vx + vy) ** 2 / (vx**2 / (x.size - 1) + vy**2 / (y.size - 1))
    half = t_quantile(0.975, max(1, int(df))) * math.sqrt(vx + vy)
    return _figure(mean, (mean - half, mean + half))


def _reduced(reduced: VarianceReduced | None) -> dict[str, Any] | None:
    if reduced is None:
        return None
    return {
        **_figure(reduced.replacement_advantage, reduced.replacement_advantage_ci95),
        "deals_ratio": reduced.deals_ratio,
        "draws_corrected": reduced.draws_corrected,
    }


class Cellar:
    """The deals, tables and par games of one cell (``CellJob``)."""

    def __init__(self, job: CellJob) -> None:
        self.job = job
        self.n = job.players
        self.rules = table_rules(self.n, {})
        self.deals = make_deals(job.seed, self.rules, job.games)
        self.env = bourre_env.env(num_players=self.n)
        self.variance = VarianceReduction() if job.aivat else None
        self.par_rows = np.empty((job.games, self.n, 6), dtype=np.int64)
        self.par_draws: list[list[Draw] | None] = []
        for k in range(job.games):
            draws: list[Draw] | None = [] if job.aivat else None
            self.par_rows[k] = play_deal(self.env, self.par_table(k), self.deals, k, draws)
            self.par_draws.append(draws)

    def par_table(self, k: int) -> list[Any]:
        """``F`` in every seat, seeded by the deal (``train.arena.scheduler.play_baselines``)."""
        return [build_agent(self.job.field, agent_seed(self.job.seed, self.n, k, 1 + s)) for s in range(self.n)]

    def entries(self, fmt: int, match: int) -> tuple[Counted, list[Any]]:
        """A match's entries seeded by entry (``train.arena.match``): the candidate (entry 0), the field's copies."""
        seeds = [agent_seed(self.job.seed, self.n, fmt, match, 1 + i) for i in range(self.n)]
        candidate = Counted(build_agent(self.job.candidate, seeds[0]))
        return candidate, [candidate, *(build_agent(self.job.field, seed) for seed in seeds[1:])]

    def corrector(self, fmt: int) -> DrawCorrector | None:
        if self.variance is None:
            return None
        return DrawCorrector(self.variance, self.rules, (self.job.seed, self.n, fmt, 0))

    def rotations(self) -> dict[str, Any]:
        """(a), and (d) of (a) with ``--aivat``."""
        n, count = self.n, self.job.games // self.n
        outcomes = np.empty((count, n, n, 6), dtype=np.int64)
        corrector = self.corrector(ROTATIONS)
        corrections = np.zeros((count, n + 1, n))
        candidates: list[Counted] = []
        entries: list[Any] = []
        for k in range(count):
            if k % self.job.match_deals == 0:
                candidate, entries = self.entries(ROTATIONS, k // self.job.match_deals)
                candidates.append(candidate)
            draws: list[list[Draw]] = [[] for _ in range(n)]
            for r in range(n):
                table = [entries[(s - r) % n] for s in range(n)]
                outcomes[k, r] = play_deal(self.env, table, self.deals, k, draws[r] if corrector else None)
            if corrector is not None:
                corrections[k] = corrector.corrections([*draws, self.par_draws[k] or []], [*range(n), -1])
        report = TableReport.of(
            outcomes,
            self.par_rows[:count],
            corrections if corrector else None,
            self.variance,
            corrector.corrected if corrector else 0,
        )
        return {
            "deals": count,
            "games": count * n,
            "decisions": sum(c.decisions for c in candidates),
            "replacement": _figure(report.replacement_advantage, report.replacement_advantage_ci95),
            "aivat": _reduced(report.variance_reduced),
        }

    def single(self, par_seeded: bool) -> dict[str, Any]:
        """(b) and (c), and (d) of (b) with ``--aivat``; (b') with ``par_seeded``."""
        n, games, fmt = self.n, self.job.games, SINGLE_PAR_SEEDED if par_seeded else SINGLE
        per_match = self.job.match_deals * n
        mine, par, par_mean = (np.empty(games) for _ in range(3))
        corrector = self.corrector(fmt)
        corrections = np.zeros((games, 2))
        candidates: list[Counted] = []
        entries: list[Any] = []
        for k in range(games):
            if k % per_match == 0:
                candidate, entries = self.entries(fmt, k // per_match)
                candidates.append(candidate)
            seat = k % n
            table = [entries[(t - k) % n] for t in range(n)]
            if par_seeded:
                table = [entries[0] if t == seat else agent for t, agent in enumerate(self.par_table(k))]
            draws: list[Draw] | None = [] if corrector else None
            rows = play_deal(self.env, table, self.deals, k, draws)
            mine[k] = rows[seat, CHIPS]
            par[k] = self.par_rows[k, seat, CHIPS]
            par_mean[k] = self.par_rows[k, :, CHIPS].mean()
            if corrector is not None and draws is not None:
                corrections[k] = corrector.corrections([draws, self.par_draws[k] or []], [seat, -1])[:, seat]
        reduced = None
        if corrector is not None and self.variance is not None:
            reduced = VarianceReduced.of(
                self.variance, mine - par, corrections[:, :1], corrections[:, 1:], corrector.corrected
            )
        return {
            "deals": games,
            "games": games,
            "decisions": sum(c.decisions for c in candidates),
            "replacement": _of(mine - par),
            "unpaired": unpaired(mine, par_mean),
            "aivat": _reduced(reduced),
        }


def measure_cell(job: CellJob) -> dict[str, Any]:
    """Every figure of one cell (module docstring)."""
    start = time.monotonic()
    cellar = Cellar(job)
    rotations = cellar.rotations()
    single = cellar.single(par_seeded=False)
    par_seeded = cellar.single(par_seeded=True)
    a, b = rotations["replacement"]["half_width"], single["replacement"]["half_width"]
    ratio = b / a if a else None
    per_decision = None
    if ratio is not None and rotations["decisions"]:
        per_decision = ratio * math.sqrt(single["decisions"] / rotations["decisions"])
    return {
        **dataclasses.asdict(job),
        "rotations": rotations,
        "single": single,
        "single_par_seeded": par_seeded,
        "ratio": ratio,
        "ratio_per_decision": per_decision,
        "ratio_par_seeded": par_seeded["replacement"]["half_width"] / a if a else None,
        "seconds": time.monotonic() - start,
    }


# ---------------------------------------------------------------------------- tables
def _pm(figure: dict[str, Any] | None) -> str:
    return "-" if figure is None else f"{figure['mean']:+.3f} ±{figure['half_width']:.3f}"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def cell_table(cells: Sequence[dict[str, Any]], aivat: bool) -> TextTable:
    columns = [
        "candidate",
        "field",
        "N",
        "games (a / b)",
        "decisions (a / b)",
        "(a) rotations",
        "(b) single + par",
        "b/a",
        "b/a per decision",
        "b'/a",
        "(c) unpaired",
    ]
    if aivat:
        columns += ["(d) a + aivat", "(d) b + aivat"]
    rows = []
    for c in cells:
        a, b = c["rotations"], c["single"]
        row = [
            c["candidate"],
            c["field"],
            str(c["players"]),
            f"{a['games']} / {b['games']}",
            f"{a['decisions']:,} / {b['decisions']:,}",
            _pm(a["replacement"]),
            _pm(b["replacement"]),
            _ratio(c["ratio"]),
            _ratio(c["ratio_per_decision"]),
            _ratio(c["ratio_par_seeded"]),
            _pm(b["unpaired"]),
        ]
        if aivat:
            row += [_pm(a["aivat"]), _pm(b["aivat"])]
        rows.append(row)
    return TextTable(columns, [i >= 2 for i in range(len(columns))], rows)


def ratings(cells: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each candidate's rating over its cells in each format (the ladder's mean and conservative interval)."""
    out = []
    for candidate in dict.fromkeys(c["candidate"] for c in cells):
        mine = [c for c in cells if c["candidate"] == candidate]
        row: dict[str, Any] = {"candidate": candidate, "cells": len(mine)}
        for fmt in ("rotations", "single"):
            figures = [c[fmt]["replacement"] for c in mine]
            card_cells = [
                Cell(
                    field=c["field"],
                    players=c["players"],
                    advantage=0.0,
                    advantage_ci95=None,
                    replacement_advantage=f["mean"],
                    replacement_advantage_ci95=f["ci95"],
                    played=True,
                )
                for c, f in zip(mine, figures, strict=True)
            ]
            card = LadderCard(
                candidate=candidate,
                version=0,
                fields=sorted({c["field"] for c in mine}),
                players=sorted({c["players"] for c in mine}),
                deals=0,
                seed=0,
                cells=card_cells,
            )
            row[fmt] = _figure(card.rating, card.rating_ci95)
            row[f"{fmt}_decisions"] = sum(c[fmt]["decisions"] for c in mine)
        a, b = row["rotations"]["half_width"], row["single"]["half_width"]
        row["ratio"] = b / a if a else None
        out.append(row)
    return out


def rating_table(rows: Sequence[dict[str, Any]]) -> TextTable:
    columns = ["candidate", "cells", "decisions (a / b)", "rating (a) rotations", "rating (b) single + par", "b/a"]
    return TextTable(
        columns,
        [False, True, True, True, True, True],
        [
            [
                r["candidate"],
                str(r["cells"]),
                f"{r['rotations_decisions']:,} / {r['single_decisions']:,}",
                _pm(r["rotations"]),
                _pm(r["single"]),
                _ratio(r["ratio"]),
            ]
            for r in rows
        ],
    )


# ---------------------------------------------------------------------------- command line
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--candidates", nargs="+", default=list(CANDIDATES), help=f"(default: {' '.join(CANDIDATES)})")
    parser.add_argument("--fields", nargs="+", default=list(FIELDS), help=f"(default: {' '.join(FIELDS)})")
    parser.add_argument("--players", type=int, nargs="+", default=list(PLAYERS), help="table sizes (default: 3 5 7)")
    parser.add_argument("--games", type=int, default=GAMES, help=f"games of the candidate per cell (default: {GAMES})")
    parser.add_argument(
        "--match-deals", type=int, default=MATCH_DEALS, help=f"deals of a match (default: {MATCH_DEALS})"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the agents (default: 0)")
    parser.add_argument("--aivat", action="store_true", help="also (d): the control variates at the draws")
    parser.add_argument("--workers", type=int, default=1, help="processes, one cell at a time each (default: 1)")
    parser.add_argument("--quick", action="store_true", help="two cells of 30 games: random against itself (the test)")
    parser.add_argument("--json", metavar="PATH", help="also write every figure as JSON")
    opts = parser.parse_args(argv)
    if opts.quick:
        for name, value in QUICK.items():
            setattr(opts, name, value)
    if min(opts.players) < 2 or opts.games < 2 * max(opts.players):
        parser.error("--players: at least 2; --games: at least twice the largest table size (two deals of (a))")
    if opts.seed < 0 or opts.workers < 1 or opts.match_deals < 1:
        parser.error("--seed must be >= 0; --workers and --match-deals at least 1")
    for spec in dict.fromkeys([*opts.candidates, *opts.fields]):
        try:
            build_agent(spec, 0)
        except ValueError as err:
            parser.error(str(err).splitlines()[0])
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    info = machine_info()
    command = "python benchmarks/arena_format.py " + " ".join(sys.argv[1:] if argv is None else argv)
    jobs = [
        CellJob(c, f, n, opts.games, opts.seed, opts.match_deals, opts.aivat)
        for n in opts.players
        for f in opts.fields
        for c in opts.candidates
    ]
    print(
        f"{machine_line(info)}; seed {opts.seed}, {opts.games} games of the candidate per cell, "
        f"{len(jobs)} cells, {time.strftime('%Y-%m-%d')}",
        flush=True,
    )
    start = time.monotonic()
    cells: list[dict[str, Any]] = []

    def done(cell: dict[str, Any]) -> None:
        cells.append(cell)
        where = f"{cell['candidate']} against {cell['field']} at {cell['players']}"
        elapsed = f"{cell['seconds']:.0f} s ({time.monotonic() - start:.0f} s in all)"
        print(f"[{len(cells)}/{len(jobs)}] {where}: {elapsed}", file=sys.stderr, flush=True)

    if opts.workers > 1 and len(jobs) > 1:
        # spawned: forking a process that holds numba's threads can deadlock
        with multiprocessing.get_context("spawn").Pool(min(opts.workers, len(jobs))) as pool:
            for cell in pool.imap(measure_cell, jobs):
                done(cell)
    else:
        for job in jobs:
            done(measure_cell(job))
    ranked = ratings(cells)
    print("\n".join(markdown_table(cell_table(cells, opts.aivat))))
    print()
    print("\n".join(markdown_table(rating_table(ranked))))
    wall = time.monotonic() - start
    print(f"\n{wall / 60:.1f} minutes of wall time; command: {command}")
    if opts.json:
        path = Path(opts.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        settings = {k: v for k, v in vars(opts).items() if k != "json"}
        data = {
            "command": command,
            "date": time.strftime("%Y-%m-%d"),
            "machine": info,
            "wall_seconds": wall,
            "settings": settings,
            "cells": cells,
            "ratings": ranked,
        }
        path.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
