"""The ladder's command line: ``bourre arena serve --ladder`` and its options, and ``bourre arena rerate``.

``rerate`` rebuilds every rating from the database (``train.arena.records.Book``, the very function the server rates
with after every match) and prints the leaderboard; ``--json FILE`` writes it as ``GET /api/leaderboard`` serves it.
Its ``--ladder-fields`` and ``--ladder-players`` must be the server's: they say which cells the ladder rating is over.

``--ladder-peers-only`` schedules no reference match (``train.arena.scheduler``, rule 5): bots play only among
themselves, the fields filling a seat only when too few bots are idle. Its bots get OpenSkill, never a ladder rating;
``benchmarks/arena_processes.py`` uses it so that what it measures is the remote decisions, not the reference agents.
``--ladder-sessions`` plays those peer matches as sessions (the pot carried, ``scheduler.SESSION_RULES``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from train.eval.ladder import LADDERS, PLAYERS, VERSION

__all__ = ["add_options", "add_rerate", "config", "rerate", "standings_text"]


def _cells(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ladder-fields",
        default=",".join(LADDERS[VERSION]),
        metavar="SPECS",
        help="the reference agents of the ladder, comma-separated (default: ladder "
        f"v{VERSION}'s, {','.join(LADDERS[VERSION])})",
    )
    parser.add_argument(
        "--ladder-players",
        type=int,
        nargs="+",
        default=list(PLAYERS),
        metavar="N",
        help=f"the table sizes of the ladder (default: {' '.join(map(str, PLAYERS))})",
    )


def add_options(serve: argparse.ArgumentParser) -> None:
    """``bourre arena serve``'s ladder options."""
    group = serve.add_argument_group("the ladder (docs/arena.md: matches that schedule themselves)")
    group.add_argument(
        "--ladder",
        action="store_true",
        help="pair the connected bots into matches, continuously, against each other and the "
        "reference agents; rate them after every match",
    )
    _cells(group)  # type: ignore[arg-type]
    group.add_argument(
        "--ladder-deals",
        type=int,
        default=10,
        metavar="N",
        help="deals of a scheduled match, each played once (default 10)",
    )
    group.add_argument(
        "--ladder-tables", type=int, default=2, metavar="N", help="scheduled matches at once (default 2)"
    )
    group.add_argument(
        "--ladder-clock",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="seconds per move of a bot in a scheduled match (default 2)",
    )
    group.add_argument(
        "--ladder-sessions",
        action="store_true",
        help="play the matches of bots among themselves as sessions, the pot carried (pot_limit=20), each rated "
        "once by OpenSkill; the reference matches stay single deals, the ladder rating's cells",
    )
    group.add_argument(
        "--ladder-peers-only",
        action="store_true",
        help="no reference matches: bots play only each other (the fields fill the seats of a "
        "table too few bots are idle for); OpenSkill only, no ladder rating",
    )


def _fields(args: argparse.Namespace) -> tuple[str, ...]:
    fields = tuple(f.strip() for f in args.ladder_fields.split(",") if f.strip())
    if not fields or any(f.startswith("bot:") for f in fields):
        raise ValueError(f"--ladder-fields: expected agent specs, comma-separated, got {args.ladder_fields!r}")
    return fields


def config(args: argparse.Namespace) -> Any:
    """The ``LadderConfig`` of ``--ladder`` (``ValueError`` naming what is wrong), or None without it."""
    if not args.ladder:
        return None
    from train.arena.scheduler import LadderConfig
    from train.web.agent_specs import check_offered

    fields = tuple(check_offered(f) for f in _fields(args))
    return LadderConfig(
        fields,
        tuple(args.ladder_players),
        args.ladder_deals,
        args.ladder_tables,
        args.ladder_clock,
        peers_only=args.ladder_peers_only,
        peer_sessions=args.ladder_sessions,
    )


def add_rerate(sub: Any, default_data: str) -> argparse.ArgumentParser:
    """The ``rerate`` subcommand's parser, its data folder ``default_data`` unless told (the caller adds
    ``--database`` and sets ``func``)."""
    rerate = sub.add_parser("rerate", help="rebuild every rating from the database and print the leaderboard")
    rerate.add_argument("--data", default=default_data, help=f"data folder (default: {default_data})")
    _cells(rerate)
    rerate.add_argument("--json", default=None, metavar="FILE", help="also write it as GET /api/leaderboard serves it")
    return rerate


def standings_text(standings: Any) -> str:
    """The leaderboard as ``bourre arena rerate`` prints it."""
    from train.eval.report import with_ci

    rows = [
        [
            str(b.rank),
            b.name,
            "-" if b.rating is None else with_ci(b.rating, b.rating_ci95),
            f"{b.cells_played}/{b.cells_total}",
            f"{b.mu:.2f} ± {b.sigma:.2f}",
            str(b.matches),
            str(b.deals),
            str(b.timeouts),
            str(b.fallbacks),
        ]
        for b in standings.bots
    ]
    head = ["rank", "bot", "ladder rating [95% CI]", "cells", "OpenSkill", "matches", "deals", "timeouts", "fallbacks"]
    widths = [max(len(row[c]) for row in [head, *rows]) for c in range(len(head))]
    lines = [
        "  ".join(row[c].ljust(w) if c == 1 else row[c].rjust(w) for c, w in enumerate(widths)) for row in [head, *rows]
    ]
    return f"{standings.matches} matches rated\n" + "\n".join(line.rstrip() for line in lines)


def rerate(args: argparse.Namespace, database: str | None) -> int:
    from train.arena.records import Book
    from train.arena.storage import Store

    store = Store(args.data, url=database)
    try:
        standings = Book(store, _fields(args), args.ladder_players).standings()
    finally:
        store.close()
    print(standings_text(standings))
    if args.json is not None:
        Path(args.json).write_text(json.dumps(standings.to_dict(), indent=1))
        print(f"written: {args.json}", file=sys.stderr)
    return 0
