"""What information is worth: clairvoyant searches against the heuristic and the network, by duplicate evaluation.

    python -m train.research.value_of_information --players 3 5 --fields heuristic ppo --deals 160 --seed 41 --workers 2

For each table size and field, every candidate is evaluated as ``train.eval.duplicate`` evaluates one (the same
deals, ``make_deals(seed, rules, deals)``; every deal played with the candidate in each seat and once more by the
field alone; every agent seeded by its seat from ``(seed, N, chunk, 1 + seat)``; the statistics of
``duplicate.TableReport``), so a fair candidate's report is exactly ``evaluate(candidate, field, ...)``'s. The
candidates (``--worlds W``, 64 by default, as ``pimc``):

* ``pimc:W``: the fair search, worlds drawn from what the seat has seen (the reference);
* ``clairvoyant:W,sees=hands``: the same search on worlds that hold every true hand, the stock still unseen;
* ``clairvoyant:W``: the same search on the true deal itself, stock order and reshuffle included.

(``agents.clairvoyant``). The clairvoyant agents need the deal: here, and only here, the table's loop
(``train.table``) is driven so that the seats whose agent says ``sees_hidden`` get an observation dict with one more
key (``agents.clairvoyant.PRIVILEGED_KEY``: the deck, the dealer, the reshuffle seed and the deal's actions so far).
Every other seat gets the env's observation dict untouched. The field's all-field table is played once per deal and
shared by the candidates, so beside each candidate's replacement advantage the report gives its paired difference
from the first candidate, deal by deal (``gain_over_reference``, with a 95% t-interval): what the information adds
to the same search.
``--json PATH`` writes everything.

What each decision type is worth (``--decisions``, ``docs/measurements.md``):

    python -m train.research.value_of_information --players 3 --fields heuristic --decisions pass draw cards all

The candidates are keyed clairvoyant agents (``agents.clairvoyant``, ``keyed=1``) that see at the decision types of
each ``at`` value named (``pass``, ``draw``, ``cards``, ``all``, or types joined by ``+``), for each way of seeing
in ``--sees``, and play the fair search everywhere else. The reference, first, is the keyed clairvoyant that sees
nowhere (``at=none``): the fair search itself, drawing the same random numbers as every other candidate wherever a
deal has come to the same point (it is ``pimc:W`` seeded afresh at each decision, tested), so each candidate's gain
over it comes only from the deals where a seen decision changed an action. The full clairvoyant (``sees=all`` at
``all``) ends the list. A view of card play alone is listed once, since by then no card is left to come from the
stock.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import bourre_env
from agents import clairvoyant
from agents.base import Agent, AgentError, choose
from bourre_env import view
from bourre_env.core.rules import Rules
from train.eval.duplicate import (
    CHUNK_DEALS,
    NUM_OUTCOMES,
    Deals,
    TableReport,
    iter_deals,
    t_interval,
)
from train.eval.jobs import deal_done, run_jobs
from train.research.cells_report import report_cells
from train.schedule import build_agent, duplicate_tables, seat_seeds
from train.table import Decision, Observer, drive, game, reset_agents

__all__ = [
    "DEFAULT_CANDIDATES",
    "Cell",
    "build",
    "candidates_for",
    "decision_candidates",
    "main",
    "measure",
    "play_privileged_deal",
]

DEFAULT_CANDIDATES = ("pimc:{w}", "clairvoyant:{w},sees=hands", "clairvoyant:{w}")
"""The candidates, ``{w}`` the worlds of every search (``--worlds``)."""


def candidates_for(worlds: int) -> list[str]:
    return [spec.format(w=worlds) for spec in DEFAULT_CANDIDATES]


def decision_candidates(worlds: int, decisions: list[str], sees: list[str]) -> list[str]:
    """The candidates of ``--decisions`` (module docstring): the keyed clairvoyant that sees nowhere, one keyed
    clairvoyant for each way of seeing in ``sees`` at each ``at`` value in ``decisions``, and the full clairvoyant
    unless listed already; ``ValueError`` naming a bad value."""
    for way in sees:
        if way not in clairvoyant.SEES:
            raise ValueError(f"sees: expected values from {clairvoyant.SEES}, got {way!r}")
    out = [f"clairvoyant:{worlds},at=none,keyed=1"]
    listed: set[tuple[frozenset[str], str]] = set()
    for way in sees:
        for at in decisions:
            types = clairvoyant.parse_at(at)
            if not types:
                raise ValueError("decisions: 'none' is the reference, always the first candidate")
            # what is seen of the stock changes nothing once the draw is over
            key = (types, way if types - {"cards"} else "")
            if key not in listed:
                listed.add(key)
                out.append(f"clairvoyant:{worlds},sees={way},at={at.strip()},keyed=1")
    if (frozenset(clairvoyant.DECISIONS), "all") not in listed:
        out.append(f"clairvoyant:{worlds},sees=all,at=all,keyed=1")
    return out


def build(spec: str, seed: int) -> Agent:
    """A clairvoyant agent for a ``clairvoyant`` spec, else ``agents.make``'s agent (``duplicate.build_agent``)."""
    if clairvoyant.is_clairvoyant(spec):
        variant = spec.strip().partition(":")[2]
        return clairvoyant.make(variant or None, seed)
    return build_agent(spec, seed)


class _DealSoFar(Observer):
    """What a clairvoyant seat is shown of the deal under way: the reshuffle seed as dealt, the actions so far."""

    def __init__(self) -> None:
        self.rng = 0
        self.actions: list[int] = []

    def dealt(self, env: Any) -> None:
        self.rng = view.rng_state_of(env.unwrapped.state_vector)
        self.actions = []

    def stepped(self, decision: Decision, action: int, before: np.ndarray, env: Any) -> None:
        self.actions.append(action)


def play_privileged_deal(
    env: Any, table: list[Agent], labels: list[str], deals: Deals, k: int, deal_name: str
) -> tuple[np.ndarray, np.ndarray]:
    """``duplicate.play_deal`` for a table where some agents see hidden cards: those whose ``sees_hidden`` is true
    get the observation dict with ``PRIVILEGED_KEY`` added (a ``PrivilegedView``), every other agent the env's dict
    as it is. The ``seat_outcomes`` rows and the settled state."""
    deal = deals.deal(k, env.unwrapped.rules)
    deck, dealer = np.asarray(deals.decks[k], dtype=np.int64), int(deals.dealers[k])
    so_far = _DealSoFar()
    quoted = [repr(label) for label in labels]

    def decide(decision: Decision) -> int:
        obs: dict[str, Any] = decision.observation
        if getattr(table[decision.seat], "sees_hidden", False):
            shown = clairvoyant.PrivilegedView(deck, dealer, so_far.rng, tuple(so_far.actions), decision.seat)
            obs = {**obs, clairvoyant.PRIVILEGED_KEY: shown}
        return choose(table[decision.seat], obs, quoted[decision.seat], decision.where)

    loop = game(env, deal, labels, deal_name, (so_far,))
    reset_agents(table)
    rows = drive(loop, decide)
    return rows, env.unwrapped.state_vector.copy()


@dataclasses.dataclass(frozen=True)
class _Job:
    candidates: tuple[str, ...]
    field: str
    players: int
    seed: int
    chunk: int
    deals: Deals


def _run_job(job: _Job) -> tuple[np.ndarray, np.ndarray, int]:
    """One chunk: outcomes ``(candidate, deal, rotation, seat, 6)``, the all-field table ``(deal, seat, 6)``, and
    the deals that reshuffled twice (where ``sees=hands`` saw the second reshuffle's order)."""
    n = job.players
    env = bourre_env.env(num_players=n)
    # the duplicate schedule's seating: the candidate in seat s draws the stream of the field's agent of seat s
    seeds = seat_seeds(job.seed, n, job.chunk)
    field = (job.field,) * n
    tables = [duplicate_tables(spec, field, seeds, build)[0] for spec in job.candidates]
    field_table = [build(job.field, seeds[s]) for s in range(n)]
    out = np.empty((len(job.candidates), len(job.deals), n, n, NUM_OUTCOMES), dtype=np.int64)
    baseline = np.empty((len(job.deals), n, NUM_OUTCOMES), dtype=np.int64)
    twice = 0
    for k in range(len(job.deals)):
        name = f"deal {job.chunk * CHUNK_DEALS + k} of seed {job.seed} at {n} players"
        for c, spec in enumerate(job.candidates):
            for r in range(n):
                labels = [spec if s == r else job.field for s in range(n)]
                out[c, k, r], state = play_privileged_deal(env, tables[c][r], labels, job.deals, k, name)
                twice += int(clairvoyant.second_reshuffle_exposed(state))
        baseline[k], _ = play_privileged_deal(env, field_table, [job.field] * n, job.deals, k, name)
        deal_done()
    return out, baseline, twice


@dataclasses.dataclass(frozen=True)
class Cell:
    """One candidate in one field at one table size: its duplicate report and its paired gain over the reference
    (the first candidate) on the same deals, chips per deal."""

    players: int
    field: str
    candidate: str
    report: TableReport
    gain_over_reference: float
    gain_over_reference_ci95: tuple[float, float] | None
    second_reshuffles: int

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def measure(
    candidates: list[str],
    fields: list[str],
    players: list[int],
    deals: int,
    seed: int,
    workers: int = 1,
    progress: bool = True,
) -> list[Cell]:
    """Every candidate in every field at every table size, on ``deals`` deals of ``seed`` (module docstring)."""
    for spec in [*candidates, *fields]:
        build(spec, 0)  # a bad spec fails here, before any worker starts
    if any(clairvoyant.is_clairvoyant(spec) for spec in fields):
        raise ValueError("fields: a clairvoyant agent is a candidate, never the field")
    cells: list[Cell] = []
    for n in players:
        rules = Rules.from_options(num_players=n)
        for field in fields:
            jobs = [
                _Job(tuple(candidates), field, n, seed, chunk, chunk_deals)
                for chunk, chunk_deals in enumerate(iter_deals(seed, rules, deals))
            ]
            results = run_jobs(
                _run_job,
                jobs,
                [len(job.deals) for job in jobs],
                min(workers, len(jobs)),
                progress,
                f"{n}p in a {field} field",
            )
            outcomes = np.concatenate([r[0] for r in results], axis=1)
            baseline = np.concatenate([r[1] for r in results])
            own = np.eye(n, dtype=bool)
            reference = outcomes[0][:, own][..., 0].sum(axis=1) / n
            for c, spec in enumerate(candidates):
                mine = outcomes[c][:, own][..., 0].sum(axis=1) / n
                gain = mine - reference
                cells.append(
                    Cell(
                        n,
                        field,
                        spec,
                        TableReport.of(outcomes[c], baseline),
                        float(gain.mean()),
                        t_interval(gain) if c else None,
                        sum(r[2] for r in results) if c else 0,
                    )
                )
    return cells


def _interval(value: float, ci: tuple[float, float] | None) -> str:
    return f"{value:+.3f}" + ("" if ci is None else f" [{ci[0]:+.3f}, {ci[1]:+.3f}]")


def markdown(cells: list[Cell]) -> list[str]:
    """The table of ``docs/measurements.md``: one row per cell."""
    lines = [
        "| players | field | candidate | deals | replacement advantage [95% CI] | gain over the first candidate "
        "[95% CI] | table advantage [95% CI] | played / bourré per deal played |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cell in cells:
        r = cell.report
        bourre = r.candidate.bourre_rate_played
        ci = cell.gain_over_reference_ci95
        lines.append(
            f"| {cell.players} | `{cell.field}` | `{cell.candidate}` | {r.deals} | "
            f"{_interval(r.replacement_advantage, r.replacement_advantage_ci95)} | "
            f"{_interval(cell.gain_over_reference, ci) if ci else ''} | "
            f"{_interval(r.advantage, r.advantage_ci95)} | "
            f"{r.candidate.play_rate:.1%} / {'' if bourre is None else f'{bourre:.1%}'} |"
        )
    return lines


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m train.research.value_of_information", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--players", type=int, nargs="+", default=[3, 5, 7], help="table sizes")
    parser.add_argument("--fields", nargs="+", default=["heuristic", "ppo"], help="the fields (agents.make specs)")
    parser.add_argument("--worlds", type=int, default=64, help="worlds of every search (pimc and the clairvoyants)")
    parser.add_argument("--candidates", nargs="+", help="candidate specs, the reference first (default: the three)")
    parser.add_argument(
        "--decisions",
        nargs="+",
        metavar="AT",
        help="instead of --candidates: keyed clairvoyants that see only at these decision types "
        f"({', '.join(clairvoyant.DECISIONS)}, all, or types joined by '+'), beside the fair reference",
    )
    parser.add_argument(
        "--sees",
        nargs="+",
        default=["hands"],
        choices=clairvoyant.SEES,
        help="with --decisions: what the clairvoyants see there (every hand, or the stock's order too)",
    )
    parser.add_argument("--deals", type=int, default=60, help="deals per table size and field")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--workers", type=int, default=1, help="processes (train.eval.jobs.run_jobs)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.deals < 1 or args.worlds < 1 or args.workers < 1:
        parser.error("--deals, --worlds and --workers take positive integers")
    if any(not 2 <= n <= 8 for n in args.players):
        parser.error(f"--players: table sizes between 2 and 8, got {args.players}")
    if args.decisions and args.candidates:
        parser.error("--decisions builds the candidates: give it or --candidates, not both")
    candidates = args.candidates or candidates_for(args.worlds)
    if args.decisions:
        try:
            candidates = decision_candidates(args.worlds, args.decisions, args.sees)
        except ValueError as err:
            parser.error(f"--decisions: {err}")
    command = "python -m train.research.value_of_information " + shlex.join(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    try:
        cells = measure(
            candidates, args.fields, args.players, args.deals, args.seed, args.workers, not args.no_progress
        )
    except (ValueError, AgentError) as err:
        print(f"value_of_information: error: {err}", file=sys.stderr)
        return 2
    report_cells(markdown(cells), cells, command, time.perf_counter() - started, args.json, {"seed": args.seed})
    return 0


if __name__ == "__main__":
    sys.exit(main())
