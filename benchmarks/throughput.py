"""Decision throughput of the Bourré environment under random legal play.

What is measured
----------------
A *decision* is one action chosen by a player (chance events, dealing and the
``None`` actions a PettingZoo AEC env expects from finished agents are not
decisions).  Every benchmark plays uniformly random legal actions and reports
decisions per second of wall-clock time:

* ``bourre_env`` AEC env (``bourre_env.env(num_players=N)``): the standard
  PettingZoo loop ``agent_iter`` / ``last`` / ``step``, so the cost includes
  building the observation dict and the action mask for every decision, as an
  RL training loop would pay it.
* ``bourre_env.batch.BatchGame``: ``random_play`` runs ``B`` games inside
  compiled code; measured once without and once with observation encoding.
  A warm-up call runs first so that numba compilation is not timed.
* Peers, measured in the same run so that each ratio compares figures taken
  on the same machine under the same conditions:

  - PettingZoo ``classic.texas_holdem_v4`` (rlcard backend), driven by the
    exact same AEC loop as our env: the reference "PettingZoo card game".
  - OpenSpiel ``euchre`` (a trick-taking card game like Bourré) with
    ``information_state_tensor`` called for the acting player at every
    decision; without it OpenSpiel would skip the observation work our env
    does, and the comparison would flatter the peer.

Peers that are not installed are reported as such; install them with
``pip install .[bench]`` (``open-spiel``, ``rlcard``, ``pettingzoo[classic]``).

``--rules PRESET`` measures our env and batch under a rule preset of
``bourre_env.core.rules.presets`` (every preset runs in both; the peers are unchanged).

The figures are single-process, single-thread numbers: one core is the
reference unit (scale-out is by running more processes), except for the batch
rows of ``--threads 1 2 ...``: ``BatchGame(threads=T)`` for each ``T``, measured
one after the other per configuration, with the ratio of each to ``T = 1``.
Those need ``NUMBA_NUM_THREADS`` at least the largest ``T`` in the environment
(``NUMBA_NUM_THREADS=2 python benchmarks/throughput.py --batch-only --threads 1 2``).  The thread-count
variables of numba, OpenMP and the BLAS libraries default to 1 (``benchmarks/preamble.py``, imported
before anything that reads them; values already in the environment
are kept); torch, if something imports it, is pinned to one thread too.  Close
other CPU-heavy work while measuring: figures move with machine load.

Every configuration gets an untimed warm-up (a short run for the AEC loops,
two small ``random_play`` calls for the batch API) so that imports, first-call
compilation and cache warm-up are not counted.

Random actions come from one ``random.Random`` per benchmark, with the same
selection code for every AEC env, so policy overhead is identical across
peers.

Usage
-----
::

    python benchmarks/throughput.py                      # 3 s per configuration
    python benchmarks/throughput.py --seconds 10 --players 5 7 \\
        --batch-size 1024 --json results.json

Ratios printed at the end: our AEC env against OpenSpiel euchre (with info
tensor) and against PettingZoo hold'em, and the batch API against its targets
(2,000,000 decisions/s for random play, 400,000 decisions/s with observations).
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import functools
import importlib
import importlib.metadata
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from machine import cpu_name

BATCH_RANDOM_TARGET = 2_000_000.0
"""Target decisions/s for ``BatchGame.random_play`` on one core."""
BATCH_OBS_TARGET = 400_000.0
"""Target decisions/s for ``BatchGame.random_play(..., with_observations=True)``."""

NOT_INSTALLED = "not installed (pip install .[bench])"

# Short untimed run before each AEC/OpenSpiel measurement, so one-off costs
# (lazy imports, first-call JIT compilation, allocator growth) are not timed.
WARMUP_SECONDS = 0.3

# Batch calls shorter than this are dominated by call overhead and timer
# resolution, so the per-game decision count is doubled until calls are longer.
MIN_BATCH_CALL_SECONDS = 0.05


@dataclass
class Result:
    """One measured (or skipped) configuration."""

    name: str
    key: str
    players: int
    decisions: int = 0
    seconds: float = 0.0
    status: str = "ok"
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.seconds > 0.0

    @property
    def rate(self) -> float | None:
        """Decisions per second, or ``None`` when not measured."""
        return self.decisions / self.seconds if self.ok else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["decisions_per_second"] = self.rate
        return data


@dataclass
class Ratio:
    """A throughput ratio ``numerator / denominator``."""

    label: str
    value: float | None


# --------------------------------------------------------------------------
# Measurement loops
# --------------------------------------------------------------------------


def aec_random_play(env: Any, seconds: float, rnd: random.Random, seed: int) -> tuple[int, float]:
    """Run the PettingZoo AEC loop with random legal actions for ``seconds``.

    Returns ``(decisions, elapsed)``.  Resets are inside the timed region: a
    training loop pays for them too.
    """
    decisions = 0
    env.reset(seed=seed)
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                # Finished agents must be stepped with None; not a decision.
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rnd.randrange(legal.size)])
                decisions += 1
            env.step(action)
            now = time.perf_counter()
            if now >= deadline:
                return decisions, now - start
        env.reset()


def openspiel_random_play(game: Any, seconds: float, rnd: random.Random) -> tuple[int, float]:
    """Random legal play of an OpenSpiel game for ``seconds``.

    The information-state tensor of the acting player is built at every
    decision, mirroring the observation our env builds per decision.
    Returns ``(decisions, elapsed)``; chance actions are not counted.
    """
    decisions = 0
    state = game.new_initial_state()
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        if state.is_terminal():
            state = game.new_initial_state()
            continue
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rnd.choices(actions, weights=probs)[0])
            continue
        state.information_state_tensor(state.current_player())
        legal = state.legal_actions()
        state.apply_action(legal[rnd.randrange(len(legal))])
        decisions += 1
        now = time.perf_counter()
        if now >= deadline:
            return decisions, now - start


def batch_random_play(game: Any, seconds: float, with_observations: bool) -> tuple[int, float, int]:
    """Call ``game.random_play`` repeatedly for about ``seconds``.

    Returns ``(decisions, elapsed, final_decisions_per_game)``.  Only the time
    spent inside ``random_play`` is counted; the caller has already warmed up.
    """
    # Pass the keyword only when needed so the plain call matches the
    # documented ``random_play(k)`` signature exactly.
    kwargs: dict[str, Any] = {"with_observations": True} if with_observations else {}
    per_game = 1
    decisions = 0
    elapsed = 0.0
    while elapsed < seconds:
        t0 = time.perf_counter()
        taken = game.random_play(per_game, **kwargs)
        dt = time.perf_counter() - t0
        decisions += int(taken)
        elapsed += dt
        if dt < MIN_BATCH_CALL_SECONDS:
            per_game *= 2
    return decisions, elapsed, per_game


# --------------------------------------------------------------------------
# Benchmarks
# --------------------------------------------------------------------------


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _try_import(module: str) -> tuple[Any, str]:
    """Import ``module``; on failure return ``(None, reason)``."""
    try:
        mod = importlib.import_module(module)
    # Any error type is possible: pettingzoo reports a missing rlcard with its
    # own exception, and bourre_env may be half-written while this runs.
    except Exception as exc:  # noqa: BLE001
        return None, _error(exc)
    # torch ignores OMP_NUM_THREADS in some builds; pin it if it came along.
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    return mod, ""


def _measure(result: Result, run: Callable[[], tuple[int, float]]) -> Result:
    """Fill ``result`` from ``run()``, recording a failure instead of raising.

    One broken benchmark (e.g. an API still being written) must not cost the
    figures of all the others.
    """
    try:
        result.decisions, result.seconds = run()
    except Exception as exc:  # noqa: BLE001
        result.status, result.detail = "error", _error(exc)
    return result


def bench_holdem(seconds: float, seed: int) -> Result:
    result = Result("PettingZoo texas_holdem_v4 AEC", "pettingzoo_holdem", 2)
    holdem, reason = _try_import("pettingzoo.classic.texas_holdem_v4")
    if holdem is None:
        result.status, result.detail = NOT_INSTALLED, reason
        return result

    def run() -> tuple[int, float]:
        env = holdem.env()
        rnd = random.Random(seed)
        aec_random_play(env, WARMUP_SECONDS, rnd, seed)
        measured = aec_random_play(env, seconds, rnd, seed)
        env.close()
        return measured

    return _measure(result, run)


def bench_openspiel_euchre(seconds: float, seed: int) -> Result:
    result = Result("OpenSpiel euchre + info tensor", "openspiel_euchre_infotensor", 4)
    pyspiel, reason = _try_import("pyspiel")
    if pyspiel is None:
        result.status, result.detail = NOT_INSTALLED, reason
        return result

    def run() -> tuple[int, float]:
        game = pyspiel.load_game("euchre")
        result.players = int(game.num_players())
        rnd = random.Random(seed)
        openspiel_random_play(game, WARMUP_SECONDS, rnd)
        return openspiel_random_play(game, seconds, rnd)

    return _measure(result, run)


def bench_ours_aec(players: int, seconds: float, seed: int, rules: str = "standard") -> Result:
    result = Result("bourre_env AEC", "bourre_aec", players)
    result.extra["rules"] = rules
    bourre_env, reason = _try_import("bourre_env")
    if bourre_env is None:
        result.status, result.detail = "unavailable", reason
        return result

    def run() -> tuple[int, float]:
        env = bourre_env.env(num_players=players, rules=rules)
        rnd = random.Random(seed)
        aec_random_play(env, WARMUP_SECONDS, rnd, seed)
        measured = aec_random_play(env, seconds, rnd, seed)
        env.close()
        return measured

    return _measure(result, run)


def _batch_key(with_observations: bool, threads: int) -> str:
    key = "bourre_batch_obs" if with_observations else "bourre_batch_random"
    return key if threads == 1 else f"{key}_threads{threads}"


def bench_ours_batch(
    players: int,
    batch_size: int,
    seconds: float,
    seed: int,
    with_observations: bool,
    rules: str = "standard",
    threads: int = 1,
) -> Result:
    suffix = " + obs" if with_observations else ""
    suffix += f", {threads} threads" if threads > 1 else ""
    result = Result(f"bourre_env batch random{suffix}", _batch_key(with_observations, threads), players)
    result.extra["batch_size"] = batch_size
    result.extra["rules"] = rules
    result.extra["threads"] = threads
    batch, reason = _try_import("bourre_env.batch")
    if batch is None:
        result.status, result.detail = "unavailable", reason
        return result

    def run() -> tuple[int, float]:
        game = batch.BatchGame(num_players=players, batch_size=batch_size, seed=seed, rules=rules, threads=threads)
        kwargs: dict[str, Any] = {"with_observations": True} if with_observations else {}
        t0 = time.perf_counter()
        # The first call compiles; the second makes sure paths first reached
        # later (e.g. auto-dealing after a deal ends) are compiled too.
        game.random_play(1, **kwargs)
        game.random_play(64, **kwargs)
        result.extra["warmup_seconds"] = round(time.perf_counter() - t0, 3)
        decisions, elapsed, per_game = batch_random_play(game, seconds, with_observations)
        result.extra["decisions_per_game_last_call"] = per_game
        return decisions, elapsed

    return _measure(result, run)


# --------------------------------------------------------------------------
# Ratios and reporting
# --------------------------------------------------------------------------


def _ratio(num: float | None, den: float | None) -> float | None:
    if num is None or den is None or den == 0.0:
        return None
    return num / den


def compute_ratios(results: list[Result], players: list[int], threads: Sequence[int] = (1,)) -> list[Ratio]:
    by_key = {(r.key, r.players): r for r in results}
    holdem = next((r for r in results if r.key == "pettingzoo_holdem"), None)
    euchre = next((r for r in results if r.key == "openspiel_euchre_infotensor"), None)
    holdem_rate = holdem.rate if holdem else None
    euchre_rate = euchre.rate if euchre else None
    ratios: list[Ratio] = []
    for n in players:
        aec = by_key.get(("bourre_aec", n))
        aec_rate = aec.rate if aec else None
        ratios.append(
            Ratio(
                f"AEC N={n} / OpenSpiel euchre + info tensor",
                _ratio(aec_rate, euchre_rate),
            )
        )
        ratios.append(Ratio(f"AEC N={n} / PettingZoo hold'em", _ratio(aec_rate, holdem_rate)))
    # The peers first: measured in this run, on this machine, their ratios hold anywhere. The targets are absolute
    # figures set on the project's 2-core machine, so their ratios mean something only on a machine like it.
    for n in players:
        plain, obs = by_key.get(("bourre_batch_random", n)), by_key.get(("bourre_batch_obs", n))
        for label, row in ((f"Batch random N={n}", plain), (f"Batch + obs N={n}", obs)):
            ratios.append(
                Ratio(f"{label} / OpenSpiel euchre + info tensor", _ratio(row.rate if row else None, euchre_rate))
            )
    for n in players:
        plain, obs = by_key.get(("bourre_batch_random", n)), by_key.get(("bourre_batch_obs", n))
        for label, row, target in (
            (f"Batch random N={n}", plain, BATCH_RANDOM_TARGET),
            (f"Batch + obs N={n}", obs, BATCH_OBS_TARGET),
        ):
            ratios.append(
                Ratio(
                    f"{label} / absolute target {target:,.0f} (set on the reference 2-core machine)",
                    _ratio(row.rate if row else None, target),
                )
            )
    for n in players:
        for with_obs in (False, True):
            one = by_key.get((_batch_key(with_obs, 1), n))
            for t in threads:
                many = by_key.get((_batch_key(with_obs, t), n))
                if t > 1:
                    ratios.append(
                        Ratio(
                            f"Batch{' + obs' if with_obs else ''} N={n}: {t} threads / 1 thread",
                            _ratio(many.rate if many else None, one.rate if one else None),
                        )
                    )
    return ratios


def _fmt_rate(rate: float | None) -> str:
    return f"{rate:,.0f}" if rate is not None else "-"


def _fmt_ratio(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "n/a"


def _status_cells(results: list[Result]) -> tuple[list[str], list[str]]:
    """Short status per result, plus numbered footnotes holding the details.

    Error messages are kept out of the table so it stays readable at 80 columns.
    """
    cells: list[str] = []
    notes: list[str] = []
    for r in results:
        if r.ok:
            cells.append("ok")
        elif r.detail:
            notes.append(f"[{len(notes) + 1}] {r.name} (N={r.players}): {r.detail}")
            cells.append(f"{r.status} [{len(notes)}]")
        else:
            cells.append(r.status)
    return cells, notes


def _package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for dist in ("bourre-env", "numpy", "numba", "pettingzoo", "rlcard", "open-spiel"):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = None
    # An uninstalled checkout has no distribution metadata; ask the module.
    ours = sys.modules.get("bourre_env")
    if versions["bourre-env"] is None and ours is not None:
        versions["bourre-env"] = getattr(ours, "__version__", None)
    return versions


def print_report(results: list[Result], ratios: list[Ratio], header: str) -> None:
    status, notes = _status_cells(results)
    titles = ("Benchmark", "Players", "Decisions/s", "Decisions", "Seconds", "Status")
    rows = [
        (
            r.name,
            str(r.players),
            _fmt_rate(r.rate),
            f"{r.decisions:,}" if r.ok else "-",
            f"{r.seconds:.2f}" if r.ok else "-",
            cell,
        )
        for r, cell in zip(results, status, strict=True)
    ]
    ratio_rows = [(q.label, _fmt_ratio(q.value)) for q in ratios]
    try:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text
    except ImportError:
        _print_plain(titles, rows, ratio_rows, notes, header)
        return
    # Rich falls back to 80 columns when piped; the table needs a bit more.
    console = Console(width=None if sys.stdout.isatty() else 132)
    console.print(header, markup=False, highlight=False)
    table = Table(title="Decisions per second (random legal play, 1 core)")
    for i, title in enumerate(titles):
        if i in (1, 2, 3, 4):
            table.add_column(title, justify="right", style="bold" if i == 2 else None)
        else:
            table.add_column(title, no_wrap=True)
    # Text(), not str: cells such as ".[bench]" must not be read as markup.
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)
    for note in notes:
        console.print(note, style="dim", markup=False, highlight=False)
    ratio_table = Table(title="Ratios")
    ratio_table.add_column("Comparison")
    ratio_table.add_column("Ratio", justify="right", style="bold")
    for label, value in ratio_rows:
        ratio_table.add_row(Text(label), Text(value))
    console.print(ratio_table)


def _print_plain(
    titles: Sequence[str],
    rows: Sequence[Sequence[str]],
    ratio_rows: Sequence[tuple[str, str]],
    notes: Sequence[str],
    header: str,
) -> None:
    def line(cells: Sequence[str], widths: Sequence[int]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    print(header)
    print()
    widths = [max(len(t), *(len(row[i]) for row in rows)) for i, t in enumerate(titles)]
    print(line(titles, widths))
    print(line(["-" * w for w in widths], widths))
    for row in rows:
        print(line(row, widths))
    for note in notes:
        print(note)
    print()
    ratio_widths = [
        max(len("Comparison"), *(len(label) for label, _ in ratio_rows)),
        len("Ratio"),
    ]
    print(line(("Comparison", "Ratio"), ratio_widths))
    print(line(["-" * w for w in ratio_widths], ratio_widths))
    for row in ratio_rows:
        print(line(row, ratio_widths))


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Decisions/s of bourre_env and peer card-game environments "
        "under random legal play (single process, single thread)."
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=3.0,
        help="timed budget per configuration, after warm-up (default: 3)",
    )
    parser.add_argument(
        "--players",
        type=int,
        nargs="+",
        default=[5, 7],
        help="player counts for bourre_env (default: 5 7)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=1024,
        help="games per BatchGame (default: 1024)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed (default: 0)")
    parser.add_argument(
        "--rules",
        default="standard",
        help="rule preset of bourre_env (bourre_env.core.rules.presets; default: standard)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        nargs="+",
        default=[1],
        help="BatchGame(threads=T) for each T, in the batch rows (default: 1; "
        "needs NUMBA_NUM_THREADS >= max T in the environment)",
    )
    parser.add_argument(
        "--batch-only",
        action="store_true",
        help="measure the batch rows only (no peers, no AEC env)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if min(args.threads) < 1:
        parser.error("--threads must be positive")
    pool = int(os.environ.get("NUMBA_NUM_THREADS", "1"))
    if max(args.threads) > pool:
        parser.error(
            f"--threads {max(args.threads)} needs NUMBA_NUM_THREADS >= {max(args.threads)} in the "
            f"environment (benchmarks/preamble.py sets 1 when unset); it is {pool}"
        )
    if 1 not in args.threads:
        args.threads = [1, *args.threads]  # every threads ratio is to one thread, measured beside it
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    if args.batch_size <= 0:
        parser.error("--batch-size must be positive")
    return args


def run_all(args: argparse.Namespace) -> list[Result]:
    # Thunks, so progress can be announced before each (slow) run.
    jobs: list[tuple[str, Callable[[], Result]]] = []
    if not args.batch_only:
        jobs += [
            ("PettingZoo hold'em", lambda: bench_holdem(args.seconds, args.seed)),
            ("OpenSpiel euchre", lambda: bench_openspiel_euchre(args.seconds, args.seed)),
        ]
        jobs += [
            (
                f"bourre_env AEC N={n}",
                functools.partial(bench_ours_aec, n, args.seconds, args.seed, args.rules),
            )
            for n in args.players
        ]
    # the thread counts of one configuration one after the other: their ratio is taken under the same load
    jobs += [
        (
            f"bourre_env batch N={n}{' + obs' if with_obs else ''}{f', {t} threads' if t > 1 else ''}",
            functools.partial(
                bench_ours_batch,
                n,
                args.batch_size,
                args.seconds,
                args.seed,
                with_obs,
                args.rules,
                t,
            ),
        )
        for n in args.players
        for with_obs in (False, True)
        for t in args.threads
    ]
    results: list[Result] = []
    for i, (label, job) in enumerate(jobs, 1):
        print(f"[{i}/{len(jobs)}] {label}", file=sys.stderr, flush=True)
        results.append(job())
    return results


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    header = (
        f"Python {platform.python_version()} on {cpu_name()}, {os.cpu_count()} CPUs, "
        f"{args.seconds:g} s per configuration, batch size {args.batch_size}, rules {args.rules}, "
        f"NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS')}"
    )
    results = run_all(args)
    ratios = compute_ratios(results, args.players, args.threads)
    print_report(results, ratios, header)
    if args.json:
        payload = {
            "config": {
                "seconds": args.seconds,
                "players": args.players,
                "batch_size": args.batch_size,
                "threads": args.threads,
                "seed": args.seed,
                "warmup_seconds": WARMUP_SECONDS,
            },
            "machine": {
                "cpu": cpu_name(),
                "python": platform.python_version(),
                "platform": platform.platform(),
                "cpu_count": os.cpu_count(),
                "threads": {var: os.environ.get(var) for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS")},
            },
            "versions": _package_versions(),
            "targets": {
                "batch_random": BATCH_RANDOM_TARGET,
                "batch_with_observations": BATCH_OBS_TARGET,
            },
            "results": [r.to_json() for r in results],
            "ratios": [asdict(q) for q in ratios],
        }
        from bourre_env import atomic_files

        atomic_files.write_text(args.json, json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
