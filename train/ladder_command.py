"""``bourre ladder``: its arguments and what it runs (``train.eval.ladder``, ``docs/leaderboard.md``).

``bourre ladder SPEC [--deals 40] [--session K] [--rule KEY=VALUE] [--workers 2]`` rates an agent against the
fixed reference fields and prints its card, rating and rank; ``bourre ladder --write-leaderboard`` rates every
reference agent and writes the page (``docs/leaderboard.md``; with ``--session K``, ``docs/leaderboard_sessions.md``
and the session reference). The command line (``train.cli``) adds this parser to its own.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from train import arguments
from train import console as console_tables
from train.eval.jobs import usable_cpus
from train.outputs import Earlier

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """The ``ladder`` command's parser, under ``commands`` (the ``bourre`` parser's subparsers)."""
    from train.eval import ladder

    lad = commands.add_parser(
        "ladder",
        help="rate an agent against the fixed reference fields (train.eval.ladder, docs/leaderboard.md)",
        description=f"Duplicate evaluation of SPEC against each reference agent of ladder v{ladder.VERSION} "
        f"({', '.join(ladder.LADDERS[ladder.VERSION])}) at {', '.join(map(str, ladder.PLAYERS))} players; prints "
        "its card, its rating and its rank among the reference agents. A card of a fast agent takes a few minutes "
        "on a 2-core machine with a worker per core (bourre ladder heuristic: 4 min 39 s on 2026-11-26, the "
        "machine shared with other work and the search compiling first), most of it against pimc:16, whose every "
        "decision is a search; the bar counts deals, and its time left weighs those left by the cost of their "
        "field (train.eval.time_left).",
    )
    what = lad.add_mutually_exclusive_group(required=True)
    what.add_argument("spec", nargs="?", metavar="SPEC", help="agent to rate, e.g. heuristic or mybot.py:Bot")
    what.add_argument(
        "--write-leaderboard",
        action="store_true",
        help="rate every reference agent; write docs/leaderboard.md and train/eval/ladder_reference.json, with "
        "--session K docs/leaderboard_sessions.md and train/eval/ladder_reference_session.json (or --markdown, --json)",
    )
    lad.add_argument(
        "--deals",
        type=arguments.positive,
        default=ladder.DEALS,
        help=f"deals per field and table size (default: {ladder.DEALS})",
    )
    lad.add_argument(
        "--session",
        type=arguments.at_most(10_000),  # train.schedule.MAX_SESSION (tests/test_ladder.py holds them equal)
        default=1,
        metavar="K",
        help="each of --deals becomes a session of K deals at one table, the pot carried from deal to deal "
        f"(docs/evaluation.md; default: 1, single deals; the shipped session reference is of K={ladder.SESSION} "
        f"with --rule {_rule_words(ladder.SESSION_RULES)}: a rank needs the same K and rules)",
    )
    lad.add_argument(
        "--rule",
        type=arguments.rule_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a house rule of every game, as bourre eval --rule (repeatable), recorded on the card; a rank needs "
        "the reference's (none for single deals)",
    )
    lad.add_argument(
        "--seed", type=arguments.seed, default=ladder.SEED, help=f"seed of the deals (default: {ladder.SEED})"
    )
    lad.add_argument(
        "--players",
        nargs="+",
        type=arguments.positive,
        default=list(ladder.PLAYERS),
        metavar="N",
        help=f"table sizes (default: {' '.join(map(str, ladder.PLAYERS))}; a rank needs these)",
    )
    lad.add_argument(
        "--workers",
        type=arguments.positive,
        default=usable_cpus(),
        help=f"processes (default: one per CPU, here {usable_cpus()}); does not change results",
    )
    lad.add_argument("--backend", choices=("local", "ray"), default="local", help="as bourre eval --backend")
    lad.add_argument("--address", default=None, metavar="ADDRESS", help="with --backend ray: as bourre eval --address")
    lad.add_argument(
        "--connect-timeout",
        type=arguments.duration("seconds"),
        default=60.0,
        metavar="SECONDS",
        help="with --address: as bourre eval --connect-timeout (default: 60)",
    )
    lad.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the card (or leaderboard) as JSON")
    lad.add_argument(
        "--markdown", type=Path, default=None, metavar="PATH", help="with --write-leaderboard: the page to write"
    )
    lad.add_argument(
        "--reference",
        type=Path,
        default=None,
        metavar="PATH",
        help="the reference agents' ratings, for the rank (default: the one beside train/eval/ladder.py, "
        "ladder_reference.json for single deals, ladder_reference_session.json with --session K)",
    )
    lad.add_argument("--no-progress", action="store_true", help="no progress bar")
    lad.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """``bourre ladder``: a card, or the leaderboard; 0 once written."""
    from rich import box
    from rich.console import Console

    from bourre_env import atomic_files
    from train.eval import ladder

    console = Console() if sys.stdout.isatty() else Console(width=120)
    if args.markdown is not None and not args.write_leaderboard:
        raise ValueError("--markdown: only with --write-leaderboard")
    rules = dict(args.rule)
    if "deals_per_episode" in rules:  # as bourre eval's: one line before the work, naming the option to give
        raise ValueError("--rule deals_per_episode: the length of a game is --session K's; give --session instead")
    if "num_players" in rules:
        raise ValueError("--rule num_players: --players sets the table sizes; give --players instead")
    json_path = (
        args.json if args.json is not None or not args.write_leaderboard else ladder.reference_file(args.session)
    )
    md_path = args.markdown or ladder.page_file(args.session)
    # Before the work: a run of many minutes must not end in a path error.
    for path, option in ((json_path, "--json"), (md_path if args.write_leaderboard else None, "--markdown")):
        if path is not None:
            atomic_files.check_writable_file(path, option)
    earlier = Earlier.at(json_path, md_path if args.write_leaderboard else None)
    run = {
        "deals": args.deals,
        "seed": args.seed,
        "players": args.players,
        "workers": args.workers,
        "progress": not args.no_progress,
        "backend": args.backend,
        "address": args.address,
        "connect_timeout": args.connect_timeout,
        "session": args.session,
        "rules": rules,
    }
    if args.write_leaderboard:
        board = ladder.leaderboard(**run)
        console.print(
            console_tables.rich_table(
                ladder.rating_table(board), f"Ladder v{board.version}: reference agents", box=box.SIMPLE_HEAD
            )
        )
        atomic_files.write_text(json_path, json.dumps(board.to_dict(), indent=2) + "\n")
        atomic_files.write_text(md_path, ladder.leaderboard_markdown(board))
        console.print(f"{board.cpu_minutes:.1f} min of CPU; wrote {json_path}, {md_path}")
        if (json_path, md_path) == (ladder.reference_file(board.session), ladder.page_file(board.session)):
            _rewrite_other_page(console, board.session)
        _say_replaced(console, earlier)
        return 0
    reference_path = args.reference or ladder.reference_file(args.session)
    reference = ladder.Leaderboard.load(reference_path)  # before the work: a bad file fails at once
    card = ladder.ladder(args.spec, **run)
    console.print(
        console_tables.rich_table(
            ladder.card_table(card),
            f"Ladder v{card.version}: {card.candidate}, {ladder.budget(card.deals, card.session)} per cell, "
            f"{f'{ladder.rules_words(card.rules)}, ' if card.rules else ''}seed {card.seed}",
            caption="chips per deal [95% CI]; table: minus the other seats at its table; replacement: minus "
            "the field's agent in its seat at the all-field table",
            box=box.SIMPLE_HEAD,
        )
    )
    console.print(ladder.rating_line(card))
    console.print(ladder.rank_line(card, reference, str(reference_path)))
    if json_path is not None:
        atomic_files.write_text(json_path, json.dumps(card.to_dict(), indent=2) + "\n")
        console.print(f"wrote {json_path}")
        _say_replaced(console, earlier)
    return 0


def _rewrite_other_page(console: Any, session: int) -> None:
    """Each shipped page sets the other kind's ratings beside its own: a new shipped reference rewrites the other
    page from the other shipped reference, so the two stay in step (nothing is played)."""
    from bourre_env import atomic_files
    from train.eval import ladder

    other = ladder.SESSION if session == 1 else 1
    path, page = ladder.reference_file(other), ladder.page_file(other)
    if path.is_file():
        atomic_files.write_text(page, ladder.leaderboard_markdown(ladder.Leaderboard.load(path)))
        console.print(f"rewrote {page} from {path}")


def _rule_words(rules: dict[str, Any]) -> str:
    return " --rule ".join(f"{k}={json.dumps(v)}" for k, v in rules.items())


def _say_replaced(console: Any, earlier: Earlier) -> None:
    replaced = earlier.line()
    if replaced is not None:
        console.print(replaced, markup=False, soft_wrap=True, highlight=False)
