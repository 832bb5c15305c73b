"""``bourre exploit``: listed for ``bourre --help``; its arguments go unparsed to ``train.research.exploiter.main``,
which parses its own (``--exact`` hands them on to ``train.research.nashconv``). Importing this module imports
neither torch nor OpenSpiel: ``main`` does, once the command is chosen.
"""

from __future__ import annotations

from typing import Any

__all__ = ["add_parser", "main"]


def add_parser(commands: Any) -> None:
    """``bourre exploit`` in ``bourre --help``, under ``commands``; its arguments go to ``main`` unparsed."""
    exploit = commands.add_parser(
        "exploit",
        help="an agent's exploitability: a trained best response, or exact NashConv on "
        "small Bourré (bourre exploit --help)",
        add_help=False,
    )
    exploit.set_defaults(unparsed=main)


def main(argv: list[str]) -> int:
    """``bourre exploit ARGS``: the exploiter's command line on ``argv``."""
    from train.research.exploiter import main as exploit_main

    return exploit_main(argv)
