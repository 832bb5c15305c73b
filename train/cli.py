"""The ``bourre`` command line: evaluate agents, run tournaments, play at the terminal.

``bourre eval --candidate heuristic --field random --players 4 7 --deals 500 --seed 0 --workers 2``
    duplicate evaluation (``train.eval.duplicate``); prints a table, writes ``eval.json`` to ``--out``.
``bourre eval ... --backend ray [--address auto]``
    the same, as Ray tasks on a local Ray instance or a cluster (``train.eval.ray_backend``); the same results.
``bourre eval --tournament random heuristic heuristic:tight --players 5 --deals 500``
    a tournament (``train.eval.tournament``); prints ratings and the payoff matrix, writes
    ``tournament.json``, ``tournament.md`` and one ``tournament_{N}p.png`` per table size.
``bourre ladder SPEC [--deals 40] [--workers 2]`` / ``bourre ladder --write-leaderboard``
    an agent against the fixed reference fields: its card, rating and rank (``train.eval.ladder``,
    ``docs/leaderboard.md``).
``bourre train [--trainer batched|sb3|exit|dmc] [--seed 0] [--total-timesteps N] [--run-dir DIR] [--resume] ...``
    self-play training: batched PPO (``train.ppo.trainer``, the default), MaskablePPO over the vector env
    (``--trainer sb3``, ``train.sb3.trainer``), expert iteration from a search (``--trainer exit``,
    ``train.exit.trainer``) or Deep Monte-Carlo (``--trainer dmc``, ``train.dmc.trainer``);
    ``bourre train [--trainer sb3|exit|dmc] --help``
    lists every argument; ends by printing the new agent's evaluation against the random and heuristic fields.
``bourre exploit --agent heuristic --players 5 [--steps N]`` / ``bourre exploit --exact [CONFIG ...]``
    how exploitable an agent is: a trained best response at full size, or exact NashConv on small Bourré
    (``train.research.exploiter``, ``train.research.nashconv``; --exact needs the openspiel extra).
``bourre bench [throughput|agents|train|device] [ARGS...]``
    the speed benchmarks of ``benchmarks/`` (from a source checkout), with their own arguments.
``bourre compile [--parts env agents search training threads] [--workers N]``
    compile numba's kernels into the cache now (``train.compile_ahead``), so that later runs only load them;
    ``--workers N`` compiles the parts after ``env`` in N processes.
``bourre serve [--port 8000]``
    play in the browser at http://127.0.0.1:8000 and replay hand histories (``train.serve``).
``bourre play --seats human,heuristic,heuristic,random,heuristic [--seed 7] [--deals 3] [--save game.json]``
    play at the terminal (``train.terminal_game``): a ``human`` seat sees its own hand and the table, and chooses among
    the numbered legal moves; ``--save`` writes the finished deals (also after a quit or Ctrl-C) as a hand history
    (``docs/hand_history.md``), as ``bourre eval --save-histories DIR`` does for every game it plays.

Rule options of ``bourre_env.core.rules.Rules`` go with ``--rule KEY=VALUE`` (repeatable), e.g.
``--rule tie=divide --rule pot_limit=20``.

Each command's parser lives beside the code it runs, in ``add_parser(commands)``: ``train.eval_command``,
``train.ladder_command``, ``train.terminal_game``, ``train.serve.command``, ``train.arena.command``,
``train.compile_ahead``, ``train.train_command``, ``train.research.command`` and ``train.bench``. This module
gathers them and dispatches: to ``func`` with the parsed arguments, or to ``unparsed`` with the command's arguments
as given (``train``, ``exploit`` and ``bench``, whose scripts parse their own).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from train import bench, compile_ahead, eval_command, ladder_command, terminal_game, train_command
from train.research import command as research_command
from train.serve import command as serve_command

__all__ = ["build_parser", "main"]


def _version() -> str:
    """The installed distribution's version (``pyproject.toml``)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("bourre-rl")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    """``bourre``'s parser: each command's own module adds its parser (``add_parser(commands)``), which sets ``func``
    (called with the parsed arguments) or ``unparsed`` (called with the command's arguments as given)."""
    parser = argparse.ArgumentParser(prog="bourre", description="Bourré (Booray): evaluate agents and play.")
    parser.add_argument("--version", action="version", version=f"bourre-rl {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    eval_command.add_parser(commands)
    ladder_command.add_parser(commands)
    terminal_game.add_parser(commands)
    serve_command.add_parser(commands)

    from train.arena.command import add_parsers as add_arena_parsers  # light: argparse and the standard library

    add_arena_parsers(commands)
    compile_ahead.add_parser(commands)
    # Listed for --help; main() hands their arguments to the training script, the exploiter and the benchmarks.
    train_command.add_parser(commands)
    research_command.add_parser(commands)
    bench.add_parser(commands)
    return parser


def _show_compile_progress() -> None:
    """numba's compile lines (``bourre_env.compile_notice``) on stderr, progress included, for every command."""
    from bourre_env import compile_notice

    compile_notice.show_lines()


def _terminate_cleanly() -> None:
    """A terminate (SIGTERM: ``kill``, a job scheduler, a container's stop) unwinds the command as an exception, so
    that it stops its worker processes and leaves no temporary file, as Ctrl-C does; by default Python would die at
    once and leave its pool workers running on their own."""
    import signal

    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return  # someone chose a handler already: theirs stands

    def unwind(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, unwind)


EXTRA_OF_MODULE = {
    **dict.fromkeys(("orjson", "websockets", "sqlalchemy", "alembic", "jsonschema", "psycopg"), "arena"),
    **dict.fromkeys(("starlette", "uvicorn"), "serve"),
    **dict.fromkeys(("rich", "tqdm", "openskill", "matplotlib"), "eval"),
    **dict.fromkeys(("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "tyro"), "train"),
    "openai": "llm",
    "ray": "ray",
    "pyspiel": "openspiel",
}
"""The extra that installs each optional module a command may import (pyproject.toml's optional dependencies)."""
EXTRA_OF_COMMAND = {"arena": "arena", "connect": "arena", "serve": "serve"}
"""Commands that need their extra whole: the modules they share with another extra are named by theirs."""


def _missing_extra(command: str, module: str | None) -> str | None:
    """The extra to install for ``command`` that could not import ``module``; None for a module no extra installs
    (a broken install, a bug: its traceback stands)."""
    extra = EXTRA_OF_MODULE.get((module or "").partition(".")[0])
    return None if extra is None else EXTRA_OF_COMMAND.get(command, extra)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if sys.argv[1:] == argv:  # the command itself, not a caller in its own process (tests call main(argv))
        _show_compile_progress()
        _terminate_cleanly()
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    unparsed = getattr(args, "unparsed", None)
    if unparsed is not None:  # train, exploit and bench: the training script and each benchmark parse their own
        return int(unparsed(argv[argv.index(args.command) + 1 :]))
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")  # as parse_args says it
    try:
        return int(args.func(args))
    except ModuleNotFoundError as err:
        extra = _missing_extra(args.command, err.name)
        if extra is None:
            raise
        needs = f"this command needs the {extra} extra: pip install -e '.[{extra}]'"
        print(f"bourre {args.command}: error: {err}; {needs}", file=sys.stderr)
        return 2
    except ValueError as err:  # bad specs and rule options, failing agents: a message, not a traceback
        print(f"bourre {args.command}: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a write the system refused after the work (a full disk, /dev/full): one line
        print(f"bourre {args.command}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
