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
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from train import arguments
from train import console as console_tables
from train.bench import BENCHMARKS, _cmd_bench
from train.compile_ahead import add_parser as add_compile_parser
from train.eval.jobs import usable_cpus
from train.ladder_command import add_parser as add_ladder_parser
from train.outputs import Earlier
from train.terminal_game import HUMAN, MAX_DEALS, _cmd_play

__all__ = ["build_parser", "main"]


def _version() -> str:
    """The installed distribution's version (``pyproject.toml``)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("bourre-rl")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bourre", description="Bourré (Booray): evaluate agents and play.")
    parser.add_argument("--version", action="version", version=f"bourre-rl {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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
    ev.set_defaults(func=_cmd_eval)

    add_ladder_parser(commands)

    play = commands.add_parser(
        "play",
        help="play at the terminal against agents",
        description="Play Bourré at the terminal. Seats are clockwise from player_0.",
    )
    play.add_argument(
        "--seats",
        required=True,
        metavar="SPECS",
        help=f"comma-separated seat list, '{HUMAN}' for a person, e.g. {HUMAN},heuristic,random; "
        f"it sets num_players (and --deals sets deals_per_episode: no --rule for them)",
    )
    play.add_argument(
        "--seed", type=arguments.seed, default=None, help="seed of the deals and the agents (default: fresh)"
    )
    play.add_argument(
        "--deals",
        type=arguments.at_most(MAX_DEALS),
        default=1,
        help=f"deals to play, 1 to {MAX_DEALS:,}; the pot and the ante exemptions carry from deal to deal "
        "(default: 1; for longer series of agents, bourre eval)",
    )
    play.add_argument(
        "--rule",
        type=arguments.rule_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rule option, e.g. tie=divide (repeatable)",
    )
    play.add_argument(
        "--save",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the finished deals as a hand history (docs/hand_history.md)",
    )
    play.set_defaults(func=_cmd_play)

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
    serve.set_defaults(func=_cmd_serve)

    from train.arena.command import add_parsers as add_arena_parsers  # light: argparse and the standard library

    add_arena_parsers(commands)
    add_compile_parser(commands)

    # Listed for --help; main() hands their arguments to the training script and the benchmarks unparsed.
    commands.add_parser(
        "train",
        help="self-play training: batched PPO, or --trainer sb3|exit|dmc (bourre train --help for its arguments)",
        add_help=False,
    )
    commands.add_parser(
        "exploit",
        help="an agent's exploitability: a trained best response, or exact NashConv on "
        "small Bourré (bourre exploit --help)",
        add_help=False,
    )
    commands.add_parser(
        "bench", help=f"the benchmarks of benchmarks/: bourre bench {{{','.join(BENCHMARKS)}}} [ARGS]", add_help=False
    )
    return parser


TRAINERS = ("batched", "sb3", "exit", "dmc")
"""``bourre train --trainer``: the batched trainer (``train.ppo.trainer``, the default), MaskablePPO
(``train.sb3.trainer``), expert iteration (``train.exit.trainer``) or Deep Monte-Carlo (``train.dmc.trainer``)."""


def _trainer(argv: list[str]) -> tuple[str | None, list[str]]:
    """``--trainer NAME`` (or ``--trainer=NAME``) taken out of the train arguments; None after printing an error.
    Without it, ``--resume`` of a run folder that holds only the sb3 trainer's checkpoint goes to that trainer."""
    trainer, rest, i = _resumed_trainer(argv) or TRAINERS[0], [], 0
    while i < len(argv):
        token = argv[i]
        if token == "--trainer" or token.startswith("--trainer="):
            if "=" in token:
                trainer = token.partition("=")[2]
            elif i + 1 < len(argv):
                trainer, i = argv[i + 1], i + 1
            else:
                trainer = ""
        else:
            rest.append(token)
        i += 1
    if trainer not in TRAINERS:
        print(
            f"bourre train: error: --trainer: expected one of {', '.join(TRAINERS)}, got {trainer!r}", file=sys.stderr
        )
        return None, rest
    return trainer, rest


def _resumed_trainer(argv: list[str]) -> str | None:
    """``sb3`` when ``argv`` resumes (``--resume``) a run folder (``--run-dir``) with ``checkpoint.zip`` and no
    ``checkpoint.pt``; ``exit`` when the folder holds an expert-iteration run (its ``rounds/``); ``dmc`` when its
    ``args.json`` is a Deep Monte-Carlo run's (it has ``epsilon``)."""
    if "--resume" not in argv:
        return None
    for i, token in enumerate(argv):
        if token.startswith("--run-dir="):
            folder = Path(token.partition("=")[2])
        elif token == "--run-dir" and i + 1 < len(argv):
            folder = Path(argv[i + 1])
        else:
            continue
        if (folder / "checkpoint.zip").is_file() and not (folder / "checkpoint.pt").exists():
            return "sb3"
        if (folder / "rounds" / "round_000").is_dir():
            return "exit"
        if _is_dmc_run(folder):
            return "dmc"
    return None


def _is_dmc_run(folder: Path) -> bool:
    """Whether ``folder``'s ``args.json`` holds the arguments of a Deep Monte-Carlo run (only they have ``epsilon``);
    an unreadable one is left to the trainer, which names what is wrong with it."""
    from train.runs import read_json  # local: the command line imports no trainer before it is chosen

    try:
        saved = read_json(folder / "args.json", "a run's arguments")  # a FIFO there is never opened
    except ValueError:
        return False
    return isinstance(saved, dict) and "epsilon" in saved


def _show_compile_progress() -> None:
    """numba's compile lines (``bourre_env.compile_notice``) on stderr, progress included, for every command."""
    import logging

    log = logging.getLogger("bourre_env")
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)


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
    # train and bench hand their arguments on untouched: the training script and each benchmark parse their own
    if argv[:1] == ["train"]:
        trainer, rest = _trainer(argv[1:])
        if trainer is None:
            return 2
        if trainer == "sb3":
            from train.sb3.trainer import main as train_main
        elif trainer == "exit":
            from train.exit.trainer import main as train_main
        elif trainer == "dmc":
            from train.dmc.trainer import main as train_main
        else:
            from train.ppo.trainer import main as train_main
        return train_main(rest)
    if argv[:1] == ["bench"]:
        return _cmd_bench(argv[1:])
    if argv[:1] == ["exploit"]:
        from train.research.exploiter import main as exploit_main

        return exploit_main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except ModuleNotFoundError as err:
        extra = _missing_extra(args.command, err.name)
        if extra is None:
            raise
        print(f"bourre {args.command}: error: {err}; this command needs the {extra} extra: pip install -e '.[{extra}]'",
              file=sys.stderr)  # fmt: skip
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


# ---------------------------------------------------------------------------- eval
def _llm_transcript(candidate: str, out: Path) -> Path | None:
    """Where a language model's every prompt and reply goes (docs/llm.md): the spec's ``transcript=PATH``, else
    ``llm_transcript.jsonl`` beside the evaluation's output; None for any other candidate."""
    name, _, variant = candidate.strip().partition(":")
    if name != "llm":
        return None
    from agents.llm import parse_spec  # local: the llm extra is optional

    named = parse_spec(variant).transcript
    return Path(named) if named else out / "llm_transcript.jsonl"


def _cmd_eval(args: argparse.Namespace) -> int:
    from rich.console import Console

    from bourre_env import atomic_files

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
        transcript = _llm_transcript(args.candidate, out)
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
        else f"a local Ray instance of {args.workers} CPU(s)"
        if args.backend == "ray"
        else f"{args.workers} worker(s)"
    )
    console.print(f"{elapsed:.1f} s with {where}; wrote {', '.join(str(p) for p in paths)}")
    replaced = earlier.line()
    if replaced is not None:
        console.print(replaced, markup=False, soft_wrap=True, highlight=False)
    return 0


# ---------------------------------------------------------------------------- serve
def _cmd_serve(args: argparse.Namespace) -> int:
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


if __name__ == "__main__":
    sys.exit(main())
