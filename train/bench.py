"""``bourre bench NAME [ARGS...]``: the speed benchmarks of ``benchmarks/`` (from a source checkout), each run as
``python benchmarks/SCRIPT.py ARGS`` would run it; ``bourre bench --help`` lists them, one line each.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["BENCHMARKS", "BENCHMARK_DESCRIPTIONS", "add_parser"]


def add_parser(commands: Any) -> None:
    """``bourre bench`` in ``bourre --help``, under ``commands``; its arguments go to ``_cmd_bench`` unparsed (each
    benchmark parses its own)."""
    bench = commands.add_parser(
        "bench", help=f"the benchmarks of benchmarks/: bourre bench {{{','.join(BENCHMARKS)}}} [ARGS]", add_help=False
    )
    bench.set_defaults(unparsed=_cmd_bench)


def _cmd_bench(argv: list[str]) -> int:
    import runpy

    if argv[:1] in (["-h"], ["--help"]):
        print(_bench_usage())
        return 0
    if not argv or argv[0] not in BENCHMARKS:
        # as argparse answers a missing or unknown subcommand: the usage, one error line, status 2
        print(_bench_usage(), file=sys.stderr)
        problem = f"unknown benchmark {argv[0]!r}" if argv else "the following arguments are required: BENCHMARK"
        print(f"bourre bench: error: {problem}", file=sys.stderr)
        return 2
    script = Path(__file__).resolve().parent.parent / "benchmarks" / BENCHMARKS[argv[0]]
    if not script.is_file():
        print(
            f"bourre bench: {script} not found; the benchmarks ship with a source checkout "
            f"(git clone, then pip install -e .)",
            file=sys.stderr,
        )
        return 2
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [str(script), *argv[1:]]
    # As `python benchmarks/x.py` would: the script's folder first on the path, for its sibling `import preamble`.
    sys.path.insert(0, str(script.parent))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return 0


BENCHMARKS = {
    "throughput": "throughput.py",
    "agents": "agents_speed.py",
    "train": "train_speed.py",
    "device": "device_suite.py",
    "arena": "arena_speed.py",
    "arena-load": "arena_load.py",
    "baselines": "baselines.py",
}
"""``bourre bench NAME``: the script of ``benchmarks/`` each name runs."""
BENCHMARK_DESCRIPTIONS = {
    "throughput": "decisions/s of the environment under random play, against peer environments",
    "agents": "decisions/s and time per decision of the agents (random, heuristic, ppo, search)",
    "train": "learner steps/s of both PPO trainers, and where their time goes",
    "device": "every speed figure of a GPU machine in one unattended command (--quick: small, on a CPU)",
    "arena": "throughput and latency of the arena server with remote bots over WebSockets",
    "arena-load": "a bounded load test of the arena server: many bots at many tables, no game lost",
    "baselines": "every trainer on the same wall-clock budget, rated by the ladder",
}
"""One line per benchmark for ``bourre bench --help`` (its script's docstring says more)."""


def _bench_usage() -> str:
    """``bourre bench``'s usage: every benchmark it runs, each with one line."""
    width = max(len(name) for name in BENCHMARKS)
    lines = [
        f"usage: bourre bench {{{','.join(BENCHMARKS)}}} [ARGS...]",
        "",
        "the speed benchmarks of benchmarks/ (from a source checkout); each takes --help for its own arguments:",
    ]
    lines += [f"  {name:<{width}}  {BENCHMARK_DESCRIPTIONS[name]}" for name in BENCHMARKS]
    return "\n".join(lines)
