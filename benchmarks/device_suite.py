"""Every speed figure of a GPU machine in one unattended command: the learner, threads, evaluation, the arena server.

    python benchmarks/device_suite.py                    # the full suite: at most 9 minutes on 16 cores and a GPU
    python benchmarks/device_suite.py --quick            # every part, small: under 3 minutes on 2 cores, no GPU
    python benchmarks/device_suite.py --parts compile    # only warm numba's cache (and print the machine)

The parts run one after the other, each in its own process with its own time budget; a part that fails or runs
past its budget (its process group is then killed) is reported as such and the next one starts. The exit status
is 1 if any part failed, after every part has run; 2 for bad arguments.

=========== ====================================================================================================
part        what it runs
=========== ====================================================================================================
machine     the GPU, its driver and memory, the CPU and its cores, the Python, torch, CUDA and numba versions
compile     every compiled kernel the later parts call, once, in one process (numba's cache: a cold cache
            compiles for minutes, a warm one loads in seconds); later parts then only load from the cache
train       ``benchmarks/train_speed.py --trainer workers``: the loop of ``bourre train`` with its network on
            CUDA and 1, 4, 8 and 15 rollout workers; learner steps/s beside the cost model's prediction
vector-env  ``BourreVectorEnv`` (``benchmarks/vector_env_speed.py``'s stepper) on 1, 8 and 16 numba threads, the
            counts taking turns in half-second slices; learner steps/s beside the projection of docs/vector_env.md
batch       ``benchmarks/throughput.py --batch-only``: ``BatchGame.random_play`` with and without observations
            on 1, 8 and 16 threads
eval        ``bourre eval --workers 16``: the shipped network against the heuristic on a fixed deal set
arena       ``benchmarks/arena_processes.py``: ``bourre arena serve --processes N --ladder`` (bots paired among
            themselves) with remote bots in processes of their own, for N = 1, cores / 2 and cores - cores / 4
            (1, 8, 12 on 16 cores); remote decisions/s, the turnaround of a move (p50, p99) and server CPU per
            decision, beside the issue's target on 16 cores: 10,000 remote decisions/s with p99 under 50 ms
=========== ====================================================================================================

Counts above the machine's CPU count are lowered to it (a repeated count is run once), in either mode; the output,
the JSON and the Markdown say which counts were asked for and which ran. ``--device auto`` (the default) puts the
learner on CUDA when torch sees a GPU and on the CPU otherwise, and says so.

Written under ``--out`` (default ``device_suite/``): ``device_suite.json`` (every figure, the machine, each part's
status, seconds and budget), ``device_suite.md`` (the same as a Markdown table, ready for docs/benchmarks.md),
``logs/PART.log`` (each part's whole output) and ``parts/`` (the files the parts wrote). The cost models are those
of docs/training.md ("the cost model", with the inputs of its GPU projection or of its quiet-machine CPU run) and
docs/vector_env.md (N threads give about 1 / (3 + 13.5 / N) us per learner step).
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import dataclasses
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve()
REPO_ROOT = SCRIPT.parent.parent
PARTS = ("machine", "compile", "train", "vector-env", "batch", "eval", "arena")
"""Every part, in the order they run; ``machine`` always runs (the others are chosen by ``--parts``)."""
TRAIN_WORKERS = (1, 4, 8, 15)
THREADS = (1, 8, 16)
EVAL_WORKERS = 16
PLAYERS = 5
TABLES = 1024
ARENA_PLAYERS = 4
"""Seats of an arena part's match, every one a remote bot (random legal actions: about 23 decisions a game)."""
ARENA_TABLES = 8
"""Matches at once per server process in the arena part: enough bots seated to keep a process busy."""
TOTAL_S = 540.0
"""The whole suite's wall time at most (the parts' budgets are cut to what is left): 9 minutes, the arena's
2 minutes included."""
QUICK_TOTAL_S = 1200.0
"""The same for ``--quick``: room for a cold numba cache (about 4.5 minutes of compiling on 2 cores)."""


# ---------------------------------------------------------------------------- arguments
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="every part with small budgets (one timed rollout per worker count, 1 s per thread count, 100 deals): "
        "under 3 minutes on 2 cores once numba's cache is warm",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("device_suite"),
        help="output folder, created if missing; files of an earlier run in it are replaced (default: device_suite)",
    )
    parser.add_argument(
        "--device",
        choices=("auto", "cuda", "cpu"),
        default="auto",
        help="the learner's torch device in the train part; auto: cuda when torch sees a GPU, else the CPU "
        "(default: auto)",
    )
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=PARTS[1:],
        default=list(PARTS[1:]),
        metavar="PART",
        help=f"the parts to run, in the suite's order whatever the order given; machine always runs "
        f"(default: all: {' '.join(PARTS[1:])})",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the training loop and of the deals (default: 0)")
    # For the tests: the named part runs a command that fails instead of its own.
    parser.add_argument("--fail-part", choices=PARTS, default=None, help=argparse.SUPPRESS)
    # A part's own process: python device_suite.py --worker NAME --json PATH [...].
    parser.add_argument("--worker", choices=("machine", "compile", "vector-env"), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, nargs="+", default=[1], help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=1.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.seed < 0:
        parser.error("--seed must be at least 0")
    if args.fail_part not in (None, "machine", *args.parts):
        parser.error(f"--fail-part {args.fail_part}: not among --parts")
    if args.worker is not None:
        if args.json is None:
            parser.error("--worker needs --json PATH")
        if min(args.threads) < 1 or args.seconds <= 0:
            parser.error("--threads must be positive, --seconds above 0")
        return args
    from bourre_env import atomic_files

    try:
        atomic_files.check_writable_folder(args.out, "--out")
    except ValueError as err:
        parser.error(str(err))
    args.out = args.out.resolve()
    return args


# ---------------------------------------------------------------------------- the cost models
@dataclasses.dataclass(frozen=True)
class CostModel:
    """The cost model of docs/training.md: per learner step, microseconds of the learner's update U, of a rollout
    worker's rollout R, of the rollout in the learner's own process, and of taking in the workers' rollouts.
    ``--workers 1`` runs the tables in the learner's process, one after the other with the update; with N >= 2
    workers the rollouts overlap the update, and learner steps/s = 1 / max(U + receive, R / N)."""

    update_us: float
    rollout_us: float
    in_process_rollout_us: float
    receive_us: float
    source: str

    def predict(self, workers: int) -> tuple[float, str]:
        """(learner steps/s, what bounds it) with ``workers`` rollout workers."""
        if workers == 1:
            return 1e6 / (self.in_process_rollout_us + self.update_us), "rollout + update in one process"
        learner, rollout = self.update_us + self.receive_us, self.rollout_us / workers
        return 1e6 / max(learner, rollout), "learner" if learner >= rollout else "workers"


COST_MODELS = {
    # docs/training.md, "Projected for a GPU learner": the H100 machine, 2026-11-23, the network on CUDA
    "cuda": CostModel(
        update_us=7.8,
        rollout_us=5 + 1.3 + 6.6,
        in_process_rollout_us=5 + 1.3 + 4.1,
        receive_us=0.8,
        source="docs/training.md, projected for a GPU learner (inputs: the H100 machine, 2026-11-23)",
    ),
    # docs/training.md, "Measured on the quiet machine", run 1 (2026-11-25): the 2-core machine, one worker
    "cpu": CostModel(
        update_us=29.7,
        rollout_us=16.0,
        in_process_rollout_us=16.0,
        receive_us=0.8,
        source="docs/training.md, the quiet 2-core machine's run 1 (2026-11-25)",
    ),
}


def vector_env_projection(threads: int) -> float:
    """docs/vector_env.md: N threads give about 1 / (3 + 13.5 / N) us per learner step (1,024 tables, 5 players)."""
    return 1e6 / (3.0 + 13.5 / threads)


# ---------------------------------------------------------------------------- the parts
@dataclasses.dataclass
class Context:
    """What the parts are built from: the arguments, and what the machine part found."""

    args: argparse.Namespace
    cpus: int
    machine: dict[str, Any] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def quick(self) -> bool:
        return bool(self.args.quick)

    def counts(self, requested: tuple[int, ...]) -> list[int]:
        """``requested`` lowered to the CPU count, each count once."""
        return sorted({min(n, self.cpus) for n in requested})

    def device(self) -> str:
        if self.args.device != "auto":
            return str(self.args.device)
        return "cuda" if self.machine.get("cuda_available") else "cpu"

    def part_file(self, name: str) -> Path:
        return self.args.out / "parts" / name


@dataclasses.dataclass
class Part:
    """One part: its command, its environment, its budget, and how its figures are read from what it wrote."""

    name: str
    what: str
    expected_s: float
    budget_s: float
    command: list[str]
    collect: Callable[[Context, str], dict[str, Any]]
    env: dict[str, str] = dataclasses.field(default_factory=dict)


class PartError(RuntimeError):
    """A part ran but its output is missing or says something failed."""


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise PartError(f"it wrote no {path.name}")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _worker_command(worker: str, json_path: Path, *extra: str) -> list[str]:
    return [sys.executable, str(SCRIPT), "--worker", worker, "--json", str(json_path), *extra]


def machine_part(ctx: Context) -> Part:
    path = ctx.part_file("machine.json")
    return Part(
        "machine",
        "the GPU, driver, CPU, cores, torch and numba versions",
        5,
        60,
        _worker_command("machine", path),
        lambda ctx, output: _read_json(path),
    )


def compile_part(ctx: Context) -> Part:
    path = ctx.part_file("compile.json")
    threads = min(2, ctx.cpus)
    return Part(
        "compile",
        "numba's compiled kernels, each once (a cold cache: minutes; a warm one: seconds)",
        15,
        900 if ctx.quick else 270,
        _worker_command("compile", path, "--threads", str(threads)),
        lambda ctx, output: _read_json(path),
        env={"NUMBA_NUM_THREADS": str(max(ctx.counts(THREADS)))},
    )


def train_part(ctx: Context) -> Part:
    path = ctx.part_file("train.json")
    counts, device = ctx.counts(TRAIN_WORKERS), ctx.device()
    limit = ["--max-seconds", "2", "--batched-steps", "1"] if ctx.quick else ["--max-seconds", "15"]
    command = [
        sys.executable,
        str(SCRIPT.parent / "train_speed.py"),
        "--trainer",
        "workers",
        "--workers-counts",
        *map(str, counts),
        "--device",
        device,
        "--seed",
        str(ctx.args.seed),
        *limit,
        "--json",
        str(path),
    ]
    timed = "one timed rollout" if ctx.quick else "15 s timed"
    return Part(
        "train",
        f"bourre train's learner on {device} with {', '.join(map(str, counts))} rollout worker(s), {timed} each",
        (15 if ctx.quick else 30) * len(counts),
        300 if ctx.quick else 150,
        command,
        lambda ctx, output: collect_train(ctx, path, device),
    )


def collect_train(ctx: Context, path: Path, device: str) -> dict[str, Any]:
    found = _read_json(path)["figures"]["workers"]
    model = COST_MODELS[device]
    one = next((f for f in found if f["workers"] == 1), None)
    run_model = (
        CostModel(
            update_us=one["learner_update_us_per_step"],
            rollout_us=one["rollout_or_wait_us_per_step"],
            in_process_rollout_us=one["rollout_or_wait_us_per_step"],
            receive_us=model.receive_us,
            source="this run's 1-worker split (U: its update, R: its rollout in the learner's process)",
        )
        if one
        else None
    )
    rows = []
    for f in found:
        n = f["workers"]
        predicted, bound = model.predict(n)
        row = {
            "workers": n,
            "steps_per_second": f["steps_per_second"],
            "steps": f["steps"],
            "seconds": f["seconds"],
            "warmup_seconds": f["warmup_seconds"],
            "learner_update_us_per_step": f["learner_update_us_per_step"],
            "rollout_or_wait_us_per_step": f["rollout_or_wait_us_per_step"],
            "worker_us_per_step": f["worker_us_per_step"],
            "cost_model_steps_per_second": predicted,
            "cost_model_bound": bound,
            "measured_over_cost_model": f["steps_per_second"] / predicted,
        }
        if run_model is not None:
            row["run_model_steps_per_second"], row["run_model_bound"] = run_model.predict(n)
        rows.append(row)
    return {
        "device": device,
        "workers_requested": list(TRAIN_WORKERS),
        "workers_run": [f["workers"] for f in found],
        "cost_model": dataclasses.asdict(model),
        "run_cost_model": dataclasses.asdict(run_model) if run_model else None,
        "counts": rows,
    }


def vector_env_part(ctx: Context) -> Part:
    path = ctx.part_file("vector_env.json")
    counts = ctx.counts(THREADS)
    seconds = 1.0 if ctx.quick else 5.0
    return Part(
        "vector-env",
        f"BourreVectorEnv, {TABLES} tables, {PLAYERS} players, on {', '.join(map(str, counts))} thread(s), "
        f"{seconds:g} s each",
        10 + len(counts) * seconds,
        300 if ctx.quick else 45,
        _worker_command("vector-env", path, "--threads", *map(str, counts), "--seconds", str(seconds)),
        lambda ctx, output: _read_json(path),
        env={"NUMBA_NUM_THREADS": str(max(counts))},
    )


def batch_part(ctx: Context) -> Part:
    path = ctx.part_file("batch.json")
    counts = ctx.counts(THREADS)
    seconds = 0.5 if ctx.quick else 3.0
    command = [
        sys.executable,
        str(SCRIPT.parent / "throughput.py"),
        "--batch-only",
        "--players",
        str(PLAYERS),
        "--batch-size",
        str(TABLES),
        "--threads",
        *map(str, counts),
        "--seconds",
        str(seconds),
        "--seed",
        str(ctx.args.seed),
        "--json",
        str(path),
    ]
    return Part(
        "batch",
        f"BatchGame.random_play, {TABLES} tables, {PLAYERS} players, with and without observations, on "
        f"{', '.join(map(str, counts))} thread(s), {seconds:g} s each",
        5 + 2 * len(counts) * (seconds + 1),
        300 if ctx.quick else 45,
        command,
        lambda ctx, output: collect_batch(path),
        env={"NUMBA_NUM_THREADS": str(max(counts))},
    )


def collect_batch(path: Path) -> dict[str, Any]:
    data = _read_json(path)
    rows, failed = [], []
    for r in data["results"]:
        if r["status"] != "ok":
            failed.append(f"{r['name']}: {r['status']} {r['detail']}".strip())
            continue
        rows.append(
            {
                "threads": r["extra"]["threads"],
                "with_observations": "obs" in r["key"],
                "decisions_per_second": r["decisions_per_second"],
                "decisions": r["decisions"],
                "seconds": r["seconds"],
            }
        )
    for row in rows:
        one = next((x for x in rows if x["threads"] == 1 and x["with_observations"] == row["with_observations"]), None)
        row["over_one_thread"] = row["decisions_per_second"] / one["decisions_per_second"] if one else None
    if failed:
        raise PartError("; ".join(failed))
    return {"threads_run": sorted({r["threads"] for r in rows}), "rows": rows}


def eval_part(ctx: Context) -> Part:
    out = ctx.part_file("eval")
    workers = min(EVAL_WORKERS, ctx.cpus)
    deals = 100 if ctx.quick else 4000
    command = [
        sys.executable,
        "-m",
        "train.cli",
        "eval",
        "--candidate",
        "ppo",
        "--field",
        "heuristic",
        "--players",
        str(PLAYERS),
        "--deals",
        str(deals),
        "--seed",
        str(ctx.args.seed),
        "--workers",
        str(workers),
        "--no-progress",
        "--out",
        str(out),
    ]
    return Part(
        "eval",
        f"bourre eval --workers {workers}: the shipped network (ppo) against the heuristic, {PLAYERS} players, "
        f"{deals} deals, seed {ctx.args.seed}",
        10 if ctx.quick else 30,
        300 if ctx.quick else 60,
        command,
        lambda ctx, output: collect_eval(out / "eval.json", output, workers, deals),
    )


def collect_eval(path: Path, output: str, workers: int, deals: int) -> dict[str, Any]:
    report = _read_json(path)
    said = re.search(r"([\d.]+) s with (\d+) worker", output)
    if said is None:
        raise PartError("its last line gave no time")
    seconds = float(said.group(1))
    table = report["tables"][0]
    games = sum(t["games"] for t in report["tables"])
    return {
        "workers_requested": EVAL_WORKERS,
        "workers": workers,
        "deals": deals,
        "games": games,
        "seconds": seconds,
        "deals_per_second": deals / seconds,
        "games_per_second": games / seconds,
        "advantage": table["advantage"],
        "advantage_ci95": table["advantage_ci95"],
        "replacement_advantage": table["replacement_advantage"],
        "replacement_advantage_ci95": table["replacement_advantage_ci95"],
    }


def arena_counts(cpus: int) -> list[int]:
    """The arena part's server process counts: 1, half the cores, and all but a quarter of them (the rest for the
    bots' processes), each once."""
    return sorted({1, max(1, cpus // 2), max(1, cpus - cpus // 4)})


def arena_part(ctx: Context) -> Part:
    path = ctx.part_file("arena.json")
    counts = arena_counts(ctx.cpus)
    if ctx.quick:  # the benchmark's own --quick sizes: a few seconds a count
        sizes = {"bots": 16, "bot-processes": 2, "players": 3, "tables": 2, "deals": 10, "warmup": 1, "seconds": 3}
    else:
        bots = ARENA_PLAYERS * ARENA_TABLES * max(counts)  # every table of the largest count seated
        sizes = {
            "bots": bots,
            "bot-processes": max(2, ctx.cpus // 4),
            "players": ARENA_PLAYERS,
            "tables": ARENA_TABLES,
            "deals": 50,
            "warmup": 5,
            "seconds": 15,
            "connect-pace": 0.01,
        }
    command = [sys.executable, str(SCRIPT.parent / "arena_processes.py"), "--processes", *map(str, counts)]
    for option, value in sizes.items():
        command += [f"--{option}", str(value)]
    command += ["--seed", str(ctx.args.seed), "--json", str(path)]
    return Part(
        "arena",
        f"bourre arena serve --processes N --ladder on {', '.join(map(str, counts))} process(es), {sizes['bots']} "
        f"remote bots in {sizes['bot-processes']} processes, {sizes['seconds']} s timed each",
        (25 if ctx.quick else 40) * len(counts),
        300 if ctx.quick else 180,
        command,
        lambda ctx, output: collect_arena(path),
    )


def collect_arena(path: Path) -> dict[str, Any]:
    data = _read_json(path)
    rows, faults = [], []
    for r in data["results"]:
        n = r["processes"]
        if r["bots_connected"] != r["bots"] or r["errors_told"] or r["bot_errors"]:
            faults.append(
                f"{n} process(es): {r['bots_connected']} of {r['bots']} bots connected, "
                f"{r['errors_told']} errors told, bot errors {r['bot_errors']}"
            )
        shares = [p["decisions"] / r["decisions"] for p in r["per_process"]] if r["decisions"] else []
        rows.append(
            {
                "processes": n,
                "decisions_per_second": r["decisions_per_second"],
                "turnaround_ms_p50": r["turnaround_ms_p50"],
                "turnaround_ms_p99": r["turnaround_ms_p99"],
                "server_cpu_us_per_decision": r["server_cpu_us_per_decision"],
                "server_cores": r["server_cores"],
                "bots_cpu_us_per_decision": r["bots_cpu_us_per_decision"],
                "decisions": r["decisions"],
                "seconds": r["seconds"],
                "least_share": min(shares, default=0.0),  # of the window's decisions, the least busy process's
                "most_share": max(shares, default=0.0),
            }
        )
    if faults:
        raise PartError("; ".join(faults))
    config = data["config"]
    return {
        "processes_run": [r["processes"] for r in rows],
        "bots": config["bots"],
        "bot_processes": config["bot_processes"],
        "players": config["players"],
        "tables_per_process": config["tables"],
        "targets": data["targets"],
        "rows": rows,
    }


PART_FILES = (
    "machine.json",
    "compile.json",
    "train.json",
    "vector_env.json",
    "batch.json",
    "eval/eval.json",
    "arena.json",
)
"""What the parts write under ``--out``/parts."""
PART_BUILDERS: dict[str, Callable[[Context], Part]] = {
    "machine": machine_part,
    "compile": compile_part,
    "train": train_part,
    "vector-env": vector_env_part,
    "batch": batch_part,
    "eval": eval_part,
    "arena": arena_part,
}


# ---------------------------------------------------------------------------- the runner
@dataclasses.dataclass
class PartResult:
    name: str
    status: str  # ok, failed, timed out, skipped (the suite's time was spent)
    seconds: float
    budget_s: float
    detail: str = ""
    figures: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


FORCED_FAILURE = [sys.executable, "-c", "import sys; print('failing as asked (--fail-part)'); sys.exit(3)"]


def _stop_group(process: subprocess.Popen[str]) -> None:
    """Terminate the part's process group (its rollout and evaluation workers too), then kill what is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            process.poll()  # the part's own process, once it exits, is reaped here
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def run_part(part: Part, ctx: Context, log: Path) -> PartResult:
    """Run ``part`` in its own process group, its output echoed indented and kept in ``log``; the process is
    stopped at its budget. Never raises for what the part does: its status says it."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **part.env}
    log.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    start = time.perf_counter()
    try:
        process = subprocess.Popen(
            part.command,
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,
        )
    except OSError as err:
        return PartResult(part.name, "failed", 0.0, part.budget_s, f"could not start: {err}")

    def echo() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            print(f"    {line.rstrip()}", flush=True)

    reader = threading.Thread(target=echo, daemon=True)
    reader.start()
    status, detail = "ok", ""
    try:
        code = process.wait(timeout=part.budget_s)
    except subprocess.TimeoutExpired:
        _stop_group(process)
        status, detail = "timed out", f"stopped at its budget of {part.budget_s:g} s"
    except KeyboardInterrupt:
        _stop_group(process)
        raise
    else:
        if code != 0:
            status, detail = "failed", f"exit status {code}"
    reader.join(timeout=10)
    seconds = time.perf_counter() - start
    output = "".join(lines)
    log.write_text(f"$ {shlex.join(part.command)}\n{output}")
    result = PartResult(part.name, status, seconds, part.budget_s, detail)
    if status == "ok":
        try:
            result.figures = part.collect(ctx, output)
        except (PartError, KeyError, ValueError, TypeError, IndexError, StopIteration) as err:
            result.status, result.detail = "failed", f"{type(err).__name__}: {err}"
    return result


def run_suite(parts: list[str], ctx: Context) -> list[PartResult]:
    """Every part of ``parts`` in turn (each built once the ones before have run); a failure stops nothing."""
    results: list[PartResult] = []
    deadline = time.perf_counter() + (QUICK_TOTAL_S if ctx.quick else TOTAL_S)
    for i, name in enumerate(parts, 1):
        part = PART_BUILDERS[name](ctx)
        if ctx.args.fail_part == name:
            part.command = FORCED_FAILURE
        left = deadline - time.perf_counter()
        if left < 1:
            print(f"[{i}/{len(parts)}] {name}: skipped, the suite's time is spent", flush=True)
            results.append(PartResult(name, "skipped", 0.0, 0.0, "the suite's time was spent before it"))
            continue
        part.budget_s = min(part.budget_s, left)
        print(
            f"[{i}/{len(parts)}] {name}: {part.what}; about {_duration(part.expected_s)}, "
            f"stopped at {_duration(part.budget_s)}",
            flush=True,
        )
        result = run_part(part, ctx, ctx.args.out / "logs" / f"{name}.log")
        results.append(result)
        print(
            f"[{i}/{len(parts)}] {name}: {result.status} in {result.seconds:.1f} s {result.detail}".rstrip(), flush=True
        )
        if name == "machine" and ctx.args.device == "auto" and not result.figures.get("cuda_available"):
            ctx.machine = result.figures
            why = "the machine part failed" if not result.ok else "torch sees no CUDA device"
            ctx.notes.append(f"{why}: the train part's learner runs on the CPU, not on CUDA (--device auto)")
            print(f"note: {ctx.notes[-1]}", flush=True)
        elif name == "machine":
            ctx.machine = result.figures
    return results


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


# ---------------------------------------------------------------------------- the report
def markdown(results: list[PartResult], ctx: Context, command: str, date: str) -> str:
    m = ctx.machine
    gpus = ", ".join(f"{g['name']} ({g['memory_gib']:.0f} GiB)" for g in m.get("gpus", [])) or "none"
    lines = [
        f"Device suite, {date}: `{command}`{' (quick mode)' if ctx.quick else ''}",
        "",
        f"Machine: GPU {gpus}, driver {m.get('driver') or 'n/a'}; {m.get('cpu_model', '?')}, {ctx.cpus} CPUs; "
        f"Python {m.get('python', '?')}, torch {m.get('torch', '?')} (CUDA {m.get('torch_cuda') or 'none'}), "
        f"numba {m.get('numba', '?')}; load average {_load(m)} at the start.",
    ]
    lines += [f"Note: {note}." for note in ctx.notes]
    lines += ["", "| part | measure | measured | cost model or reference |", "|---|---|---:|---|"]
    for r in results:
        if not r.ok:
            see = "" if r.status == "skipped" else f" (see logs/{r.name}.log)"
            lines.append(f"| {r.name} | **{r.status}**: {r.detail}{see} | | |")
            continue
        lines += _rows(r, ctx)
    lines += [""] + [f"{note}" for r in results if r.ok for note in _notes(r)]
    return "\n".join(lines).rstrip() + "\n"


def _notes(r: PartResult) -> list[str]:
    """The lines under the table: where each prediction comes from."""
    f = r.figures
    if r.name == "train":
        m, own = f["cost_model"], f["run_cost_model"]
        line = (
            f"Train: the cost model is learner steps/s = 1 / (R + U) with the tables in the learner's process, "
            f"1 / max(U + {m['receive_us']:g}, R / N) with N rollout workers; its inputs are those of {m['source']}: "
            f"U {m['update_us']:g} us, R {m['rollout_us']:g} us ({m['in_process_rollout_us']:g} in the learner's "
            f"process) per learner step."
        )
        if own:
            line += f" This run's 1-worker split: U {own['update_us']:.1f} us, R {own['rollout_us']:.1f} us."
        return [line]
    if r.name == "arena":
        t = f["targets"]
        return [
            f"Arena: {f['bots']} remote bots (random legal actions) in {f['bot_processes']} processes, tables of "
            f"{f['players']}, {f['tables_per_process']} at once per server process, bots paired only among "
            "themselves (--ladder-peers-only); turnaround: a bot's action to the next turn of its match reaching a "
            "bot, both on the bots' side; server CPU: the serving processes' over the window. The issue's target on "
            f"{t['cores']} cores: {t['decisions_per_second']:,.0f} remote decisions/s with p99 under "
            f"{t['turnaround_ms_p99']:g} ms."
        ]
    if r.name == "vector-env":
        return [
            "Vector env: the projection is docs/vector_env.md's 1 / (3 + 13.5 / N) us per learner step on N "
            f"threads (the 2-core machine's profile); numba's threading layer {f['threading_layer'] or 'unused'}."
        ]
    return []


def _load(machine: dict[str, Any]) -> str:
    load = machine.get("load_average")
    return f"{load[0]:.2f}" if load else "?"


def _rows(r: PartResult, ctx: Context) -> list[str]:
    f = r.figures
    if r.name == "machine":
        return []
    if r.name == "compile":
        return [f"| compile | numba's kernels, compiled or loaded from the cache | {f['seconds']:.0f} s | |"]
    if r.name == "train":
        rows = []
        for c in f["counts"]:
            n = c["workers"]
            where = "the tables in the learner's process" if n == 1 else f"{n} rollout workers"
            own = (
                f"; {c['run_model_steps_per_second']:,.0f} from this run's 1-worker split"
                if n > 1 and "run_model_steps_per_second" in c
                else ""
            )
            rows.append(
                f"| train | `bourre train` learner steps/s, network on {f['device']}, {where} | "
                f"{c['steps_per_second']:,.0f} | {c['cost_model_steps_per_second']:,.0f} "
                f"({c['cost_model_bound']}){own} |"
            )
        return rows
    if r.name == "vector-env":
        return [
            f"| vector-env | `BourreVectorEnv` learner steps/s, {f['tables']:,} tables, {f['players']} players, "
            f"{c['threads']} thread(s) | {c['steps_per_second']:,.0f} | "
            f"{vector_env_projection(c['threads']):,.0f} (projection); {c['over_one_thread']:.2f}x 1 thread |"
            for c in f["counts"]
        ]
    if r.name == "batch":
        return [
            f"| batch | `BatchGame.random_play` decisions/s, {TABLES:,} tables, {PLAYERS} players"
            f"{' + observations' if c['with_observations'] else ''}, {c['threads']} thread(s) | "
            f"{c['decisions_per_second']:,.0f} | "
            + (f"{c['over_one_thread']:.2f}x 1 thread |" if c["over_one_thread"] is not None else "|")
            for c in f["rows"]
        ]
    if r.name == "eval":
        return [
            f"| eval | `bourre eval --workers {f['workers']}`, shipped network vs heuristic, {PLAYERS} players, "
            f"{f['deals']:,} deals: deals/s | {f['deals_per_second']:,.1f} ({f['seconds']:.1f} s) | table advantage "
            f"{f['advantage']:+.3f} [{f['advantage_ci95'][0]:+.3f}, {f['advantage_ci95'][1]:+.3f}] |"
        ]
    if r.name == "arena":
        t = f["targets"]
        rows = []
        for c in f["rows"]:
            met = (
                c["decisions_per_second"] >= t["decisions_per_second"]
                and (c["turnaround_ms_p99"] or 1e9) < t["turnaround_ms_p99"]
            )
            rows.append(
                f"| arena | `bourre arena serve --processes {c['processes']} --ladder`: remote decisions/s; "
                f"turnaround p50 / p99; server CPU a decision ({c['server_cores']:.1f} cores); spread "
                f"{100 * c['least_share']:.0f}-{100 * c['most_share']:.0f}% a process | "
                f"{c['decisions_per_second']:,.0f}; {c['turnaround_ms_p50'] or 0:.1f} / "
                f"{c['turnaround_ms_p99'] or 0:.1f} ms; {c['server_cpu_us_per_decision'] or 0:,.0f} us | "
                f">= {t['decisions_per_second']:,.0f}/s, p99 < {t['turnaround_ms_p99']:g} ms on {t['cores']} cores"
                f"{': met' if met else ''} |"
            )
        return rows
    return []


def usable_cpus() -> int:
    """The CPUs this process may run on (a container's or a job's share), else the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker is not None:
        return run_worker(args)
    command = shlex.join(["python", "benchmarks/device_suite.py", *(sys.argv[1:] if argv is None else argv)])
    ctx = Context(args, usable_cpus())
    parts = ["machine", *(p for p in PARTS[1:] if p in args.parts)]
    date = datetime.date.today().isoformat()
    lowered = [
        f"{what} {list(asked)} run as {ctx.counts(asked)}"
        for what, asked in (("rollout workers", TRAIN_WORKERS), ("threads", THREADS), ("eval workers", (EVAL_WORKERS,)))
        if ctx.counts(asked) != sorted(set(asked))
    ]
    if lowered:
        ctx.notes.append(f"{ctx.cpus} CPUs: counts above it lowered to it: {'; '.join(lowered)}")
    for folder in ("parts", "logs"):
        (args.out / folder).mkdir(parents=True, exist_ok=True)
    for stale in PART_FILES:  # a part that writes nothing this time must not be read from an earlier run
        (args.out / "parts" / stale).unlink(missing_ok=True)
    print(f"{command}\n{date}, {ctx.cpus} CPUs; writing to {args.out}", flush=True)
    for note in ctx.notes:
        print(f"note: {note}", flush=True)
    started = time.perf_counter()
    try:
        results = run_suite(parts, ctx)
    except KeyboardInterrupt:
        print("device_suite: interrupted; the running part was stopped, nothing written", file=sys.stderr)
        return 130
    total = time.perf_counter() - started
    report = {
        "command": command,
        "date": date,
        "quick": args.quick,
        "seconds": total,
        "ok": all(r.ok for r in results),
        "cpus": ctx.cpus,
        "notes": ctx.notes,
        "machine": ctx.machine,
        "parts": {
            r.name: {
                "status": r.status,
                "seconds": r.seconds,
                "budget_seconds": r.budget_s,
                "detail": r.detail,
                "figures": r.figures,
            }
            for r in results
        },
    }
    from bourre_env import atomic_files

    table = markdown(results, ctx, command, date)
    atomic_files.write_text(args.out / "device_suite.json", json.dumps(report, indent=2) + "\n")
    atomic_files.write_text(args.out / "device_suite.md", table)
    print(f"\n{table}")
    failed = [r.name for r in results if not r.ok]
    print(
        f"{len(results) - len(failed)} of {len(results)} parts ok in {total:.0f} s"
        + (f"; failed: {', '.join(failed)}" if failed else "")
        + f"; wrote {args.out / 'device_suite.json'} and {args.out / 'device_suite.md'}",
        flush=True,
    )
    return 1 if failed else 0


# ---------------------------------------------------------------------------- the parts' own processes
def run_worker(args: argparse.Namespace) -> int:
    from bourre_env import atomic_files

    figures = WORKERS[args.worker](args)
    atomic_files.write_text(args.json, json.dumps(figures, indent=2) + "\n")
    return 0


def _say(message: str) -> None:
    print(message, flush=True)


def worker_machine(args: argparse.Namespace) -> dict[str, Any]:
    import numba
    import numpy
    import torch
    from machine import cpu_name

    cpu_model = cpu_name()
    gpus = []
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            gpus.append({"name": props.name, "memory_gib": props.total_memory / 2**30})
    driver = None
    if shutil.which("nvidia-smi"):
        query = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        driver = query.stdout.strip().splitlines()[0] if query.returncode == 0 and query.stdout.strip() else None
    info = {
        "gpus": gpus,
        "driver": driver,
        "cuda_available": torch.cuda.is_available(),
        "cpu_model": cpu_model or platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "numba": numba.__version__,
        "numpy": numpy.__version__,
    }
    for key, value in info.items():
        _say(f"{key}: {value}")
    return info


def worker_compile(args: argparse.Namespace) -> dict[str, Any]:
    """Call every compiled path of the later parts once, small: compiled (and cached) now, loaded later."""
    seconds: dict[str, float] = {}
    threads = sorted({1, max(args.threads)})

    def step(what: str, call: Callable[[], object]) -> None:
        _say(f"compiling (or loading from numba's cache): {what}")
        start = time.perf_counter()
        call()
        seconds[what] = time.perf_counter() - start
        _say(f"  {seconds[what]:.1f} s")

    def batch_game() -> None:
        from bourre_env.batch import BatchGame

        for t in threads:
            game = BatchGame(batch_size=64, seed=0, num_players=PLAYERS, threads=t)
            game.random_play(64)
            game.random_play(64, with_observations=True)

    def vector_env() -> None:
        from vector_env_speed import vector_stepper

        from agents.batched_players import BatchedHeuristicPlayer

        for t in threads:
            vector_stepper(64, PLAYERS, BatchedHeuristicPlayer("default", 0), t)()

    def collector() -> None:
        import numpy as np
        import torch

        from train.learning.policy_net import PolicyNet
        from train.ppo.rollout import Collector, gae
        from train.ppo.trainer import Args

        torch.set_num_threads(1)
        a = Args(players=(PLAYERS,), imitation_decisions=0, progress=False)
        Collector(PolicyNet(a.hidden), a.players, 32, a.pool(), seed=0, reward_scale=a.reward_scale).collect(512)
        # the update's advantages, which the train part would otherwise compile in its first update
        gae(np.array([1, -1]), np.array([False, True]), np.zeros(2), np.zeros(2), a.gamma, a.gae_lambda)

    def evaluation() -> None:
        from train.eval.duplicate import evaluate

        evaluate("ppo", "heuristic", players=PLAYERS, deals=2, seed=0, workers=1, progress=False)

    on = ", ".join(map(str, threads))
    step(f"the rules core and BatchGame: random play, observations, on {on} thread(s)", batch_game)
    step(f"BourreVectorEnv and the compiled heuristic, on {on} thread(s)", vector_env)
    step("the training collector: tables, seat pool, opponents", collector)
    step("the evaluation: AEC env, shipped network, heuristic", evaluation)
    return {"seconds": sum(seconds.values()), "steps": seconds, "threads": threads}


def worker_vector_env(args: argparse.Namespace) -> dict[str, Any]:
    import numba
    from vector_env_speed import interleaved_rates, vector_stepper

    from agents.batched_players import BatchedHeuristicPlayer

    counts = sorted(set(args.threads))
    steppers = {}
    for t in counts:
        _say(f"setting up {TABLES} tables on {t} thread(s)")
        steppers[str(t)] = vector_stepper(TABLES, PLAYERS, BatchedHeuristicPlayer("default", 0), t)
    _say(f"timing: {args.seconds:g} s each, in half-second slices in turn")
    rates = interleaved_rates(steppers, args.seconds)
    one = rates.get("1")
    rows = []
    for t in counts:
        rate = rates[str(t)]
        rows.append(
            {
                "threads": t,
                "steps_per_second": rate,
                "over_one_thread": rate / one if one else None,
                "projection_steps_per_second": vector_env_projection(t),
            }
        )
        _say(f"  {t} thread(s): {rate:,.0f} learner steps/s")
    layer = numba.threading_layer() if max(counts) > 1 else None
    return {"tables": TABLES, "players": PLAYERS, "threading_layer": layer, "counts": rows}


WORKERS: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "machine": worker_machine,
    "compile": worker_compile,
    "vector-env": worker_vector_env,
}


if __name__ == "__main__":
    sys.exit(main())
