"""``bourre serve``: its arguments and what it runs (``train.serve.run``).

The command line (``train.cli``) adds this parser to its own; importing this module imports neither the web
framework nor the rules: ``run`` does, once the command is chosen.
"""

from __future__ import annotations

import argparse
from typing import Any

from train import arguments

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """The ``serve`` command's parser, under ``commands`` (the ``bourre`` parser's subparsers)."""
    serve = commands.add_parser(
        "serve",
        help="play in the browser, and replay hand histories (train.serve)",
        description="A web page to play against agents and replay hand histories; needs "
        "the serve extra (pip install -e '.[serve]').",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine)")
    serve.add_argument("--port", type=arguments.port, default=8000, help="port, 1 to 65535 (default: 8000)")
    serve.add_argument("--max-tables", type=arguments.positive, default=None, help="live tables at most (default: 32)")
    serve.add_argument(
        "--max-tables-per-client",
        type=arguments.positive,
        default=None,
        metavar="N",
        help="live tables of one client address at most (default: 8)",
    )
    serve.add_argument(
        "--idle-minutes",
        type=arguments.duration("minutes"),
        default=None,
        help="close a table after this many minutes without a request (default: 30)",
    )
    serve.add_argument(
        "--move-seconds",
        type=arguments.duration("seconds"),
        default=None,
        metavar="S",
        help="wall time an agent at a table has for each move (and its reset, and being built); "
        "past it the heuristic plays for it (default: 10)",
    )
    serve.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="SPEC",
        help="also offer this agent spec, e.g. ppo:path/to/policy.npz (repeatable)",
    )
    serve.add_argument(
        "--seed", type=arguments.seed, default=None, help="seed of the deals and agents (default: fresh)"
    )
    serve.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """``bourre serve``: the web server of ``train.serve``, until it is stopped."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as err:
        raise ValueError(f"{err}; bourre serve needs the serve extra: pip install -e '.[serve]'") from None
    from train import serve

    serve.run(
        args.host,
        args.port,
        args.max_tables,
        args.idle_minutes,
        args.agent,
        args.seed,
        args.max_tables_per_client,
        args.move_seconds,
    )
    return 0
