"""``bourre eval``: its arguments and what it runs (``train.eval.duplicate``, ``train.eval.tournament``).

``bourre eval --candidate SPEC --field SPEC ...`` is a duplicate evaluation, printed as tables and written to
``eval.json``; ``bourre eval --tournament SPEC SPEC ...`` a tournament, written as ``tournament.json``,
``tournament.md`` and a plot per table size (``docs/evaluation.md``). The command line (``train.cli``) adds this
parser to its own.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from train import arguments
from train import console as console_tables
from train.eval.jobs import usable_cpus
from train.outputs import Earlier

__all__ = ["add_parser", "llm_transcript", "run"]


def add_parser(commands: Any) -> None:
    """The ``eval`` command's parser, under ``commands`` (the ``bourre`` parser's subparsers)."""
    ev = commands.add_parser(
        "eval",
        help="duplicate evaluation of a candidate, or a tournament of several agents",
        description="Duplicate evaluation (--candidate) or a tournament (--tournament).",
    )
    what = ev.add_mutually_exclusive_group(required=True)
    what.add_argument("--candidate", metavar="SPEC", help="agent to evaluate, e.g. heuristic or heuristic:tight")
    what.add_argument("--tournament", nargs="+", metavar="SPEC", help="agents of a tournament (at least 2)")
    ev.add_argument(
        "--field",
        nargs="+",
        default=["random"],
        metavar="SPEC",
        help="opponents: one spec for every other seat, or one per seat (default: random)",
    )
    ev.add_argument(
        "--players", nargs="+", type=arguments.positive, default=[5], metavar="N", help="table sizes (default: 5)"
    )
    ev.add_argument("--deals", type=arguments.positive, default=500, help="deals per table size (default: 500)")
    ev.add_argument(
        "--session",
        type=arguments.at_most(10_000),  # train.schedule.MAX_SESSION (tests/test_sessions.py holds them equal)
        default=1,
        metavar="K",
        help="each of --deals becomes a session of K deals at one table, the pot carried from deal to deal "
        "(docs/evaluation.md; default: 1, single deals)",
    )
    ev.add_argument("--seed", type=arguments.seed, default=0, help="seed of the deals and the agents (default: 0)")
    ev.add_argument(
        "--workers",
        type=arguments.positive,
        default=usable_cpus(),
        help=f"processes (default: one per CPU, here {usable_cpus()}); does not change results",
    )
    ev.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="local: processes on this machine (default); ray: Ray tasks, same results (pip extra [ray])",
    )
    ev.add_argument(
        "--address",
        default=None,
        metavar="ADDRESS",
        help="with --backend ray: the cluster (auto, ray://HOST:10001); default: a local Ray instance "
        "of --workers CPUs",
    )
    ev.add_argument(
        "--connect-timeout",
        type=arguments.duration("seconds"),
        default=60.0,
        metavar="SECONDS",
        help="with --address: give up on a cluster that does not answer within this time (default: 60)",
    )
    ev.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder, created if missing; files of an earlier evaluation in it are replaced, and the last "
        "line names them (default: runs/eval, or runs/tournament with --tournament)",
    )
    ev.add_argument(
        "--rule",
        type=arguments.rule_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rule option, e.g. tie=divide (repeatable)",
    )
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")
    ev.add_argument(
        "--save-histories",
        type=Path,
        default=None,
        metavar="DIR",
        help="write every game as a hand history under DIR (with --candidate; docs/hand_history.md)",
    )
    ev.add_argument(
        "--aivat",
        nargs="?",
        const="heuristic",
        default=None,
        metavar="VALUE",
        help="also report a variance-reduced replacement advantage (control variates at the draws, "
        "train.eval.variance), valued by rollouts of VALUE: heuristic (default), random, ppo or ppo:PATH",
    )
    ev.add_argument(
        "--aivat-resamples",
        type=arguments.positive,
        default=32,
        metavar="K",
        help="with --aivat: rollouts per term of each correction (default: 32)",
    )
    ev.add_argument(
        "--aivat-candidate",
        default=None,
        metavar="VALUE",
        help="with --aivat: rollouts of VALUE for the candidate's own seat (e.g. ppo when it is the candidate); "
        "the deal itself is then corrected too",
    )
    ev.set_defaults(func=run)


def llm_transcript(candidate: str, out: Path) -> Path | None:
    """Where a language model's every prompt and reply goes (docs/llm.md): the spec's ``transcript=PATH``, else
    ``llm_transcript.jsonl`` beside the evaluation's output; None for any other candidate."""
    name, _, variant = candidate.strip().partition(":")
    if name != "llm":
        return None
    from agents.llm import parse_spec  # local: the llm extra is optional

    named = parse_spec(variant).transcript
    return Path(named) if named else out / "llm_transcript.jsonl"


def run(args: argparse.Namespace) -> int:
    """``bourre eval``: a duplicate evaluation (``--candidate``) or a tournament (``--tournament``), printed and
    written to ``--out``; raises ``ValueError`` for a one-line error."""
    from rich.console import Console

    from bourre_env import atomic_files
    from bourre_env.words import plural

    console = Console()
    if not console.is_terminal:
        console = Console(width=120)  # a pipe or file has no width to respect; 80 would wrap the tables
    options = dict(args.rule)
    if "num_players" in options and any(n != options["num_players"] for n in args.players):
        raise ValueError(
            f"--rule num_players={options['num_players']!r} contradicts --players (which makes it "
            f"{' and '.join(map(str, args.players))}); --players alone sets it"
        )
    if args.tournament:
        try:  # before the work: the ratings come after every deal is played
            import openskill  # noqa: F401
        except ImportError:
            raise ValueError(
                "--tournament rates the agents with openskill, which is not installed: pip install -e '.[eval]'"
            ) from None
    if args.tournament and args.save_histories is not None:
        raise ValueError("--save-histories: only with --candidate")
    if args.tournament and args.aivat is not None:
        raise ValueError("--aivat: only with --candidate")
    if args.aivat is None and args.aivat_candidate is not None:
        raise ValueError("--aivat-candidate: only with --aivat")
    if args.session > 1 and args.aivat is not None:
        raise ValueError("--aivat: not with --session (its control variates value single deals from an empty pot)")
    if "deals_per_episode" in options:
        raise ValueError("--rule deals_per_episode: the length of a game is --session K's; give --session instead")
    variance = None
    if args.aivat is not None:
        from train.eval.variance import VarianceReduction

        try:
            variance = VarianceReduction(args.aivat, args.aivat_resamples, args.aivat_candidate)
        except ValueError as err:
            raise ValueError(f"--aivat: {err}") from None
    out = args.out or Path("runs/tournament" if args.tournament else "runs/eval")
    # Before the work: an evaluation of hours must not end in a path error.
    atomic_files.check_writable_folder(out, "--out")
    if args.save_histories is not None:
        atomic_files.check_writable_folder(args.save_histories, "--save-histories")
    earlier = Earlier.at(out, args.save_histories, depth=1)  # histories lie in one folder per table size
    started = time.perf_counter()
    if args.tournament:
        from train.eval.tournament import tournament

        report = tournament(
            args.tournament,
            players=args.players,
            deals=args.deals,
            seed=args.seed,
            workers=args.workers,
            progress=not args.no_progress,
            rule_options=options,
            backend=args.backend,
            address=args.address,
            connect_timeout=args.connect_timeout,
            session=args.session,
        )
        elapsed = time.perf_counter() - started
        console_tables.print_tournament(console, report)
        for line in filter(None, (t.session_line() for t in report.tables)):
            console.print(line, markup=False, soft_wrap=True)
        paths = report.save(out)
    else:
        from train.eval.duplicate import evaluate

        field = args.field[0] if len(args.field) == 1 else args.field
        # a language model's every prompt and reply, beside the evaluation's output (docs/llm.md)
        transcript = llm_transcript(args.candidate, out)
        ereport = evaluate(
            args.candidate,
            field,
            players=args.players,
            deals=args.deals,
            seed=args.seed,
            workers=args.workers,
            progress=not args.no_progress,
            rule_options=options,
            histories=args.save_histories,
            backend=args.backend,
            address=args.address,
            connect_timeout=args.connect_timeout,
            variance_reduction=variance,
            transcript=transcript,
            session=args.session,
        )
        elapsed = time.perf_counter() - started
        console_tables.print_eval(console, ereport)
        for t in ereport.tables:
            if t.agent_stats:
                console.print(console_tables.agent_counts_line(t.players, t.agent_stats), markup=False, soft_wrap=True)
        if transcript is not None:
            console.print(f"transcript of every decision: {transcript}")
        out.mkdir(parents=True, exist_ok=True)
        paths = [atomic_files.write_text(out / "eval.json", json.dumps(ereport.to_dict(), indent=2) + "\n")]
    where = (
        f"the Ray cluster at {args.address}"
        if args.address
        else f"a local Ray instance of {plural(args.workers, 'CPU')}"
        if args.backend == "ray"
        else plural(args.workers, "worker")
    )
    console.print(f"{elapsed:.1f} s with {where}; wrote {', '.join(str(p) for p in paths)}")
    replaced = earlier.line()
    if replaced is not None:
        console.print(replaced, markup=False, soft_wrap=True, highlight=False)
    return 0
