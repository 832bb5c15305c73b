"""``benchmarks/device_suite.py``: its quick mode runs every part and writes every figure; a part that fails or runs
past its budget fails the suite after the other parts have run; bad arguments are refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "device_suite.py"


def _suite(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True, cwd=ROOT, timeout=1800)


@pytest.fixture
def suite(import_benchmark: Callable[[str], ModuleType]) -> ModuleType:
    return import_benchmark("benchmarks.device_suite")


@pytest.mark.slow  # a minute of every part's compile and run; the suite's runner is checked by the tests below
def test_quick_mode_runs_every_part_and_writes_every_figure(tmp_path: Path) -> None:
    result = _suite("--quick", "--out", str(tmp_path))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    report = json.loads((tmp_path / "device_suite.json").read_text())
    parts = report["parts"]
    assert list(parts) == ["machine", "compile", "train", "vector-env", "batch", "eval", "arena"]
    assert all(p["status"] == "ok" for p in parts.values()), {k: p["detail"] for k, p in parts.items()}
    assert report["ok"] is True and report["quick"] is True
    machine = report["machine"]
    assert {"gpus", "driver", "cuda_available", "cpu_count", "torch", "numba", "python"} <= set(machine)

    train = parts["train"]["figures"]
    assert train["workers_requested"] == [1, 4, 8, 15] and train["workers_run"][0] == 1
    for row in train["counts"]:
        assert row["steps_per_second"] > 0 and row["cost_model_steps_per_second"] > 0
    vector = parts["vector-env"]["figures"]["counts"]
    assert vector[0]["threads"] == 1 and all(c["steps_per_second"] > 0 for c in vector)
    batch = parts["batch"]["figures"]["rows"]
    assert {(r["threads"], r["with_observations"]) for r in batch} >= {(1, False), (1, True)}
    evaluation = parts["eval"]["figures"]
    assert evaluation["deals"] == 100 and evaluation["deals_per_second"] > 0
    arena = parts["arena"]["figures"]
    assert arena["processes_run"] == sorted({1, max(1, report["cpus"] // 2), report["cpus"] - report["cpus"] // 4})
    for row in arena["rows"]:
        assert (
            row["decisions_per_second"] > 0 and row["turnaround_ms_p99"] > 0 and row["server_cpu_us_per_decision"] > 0
        )

    table = (tmp_path / "device_suite.md").read_text()
    assert "| part | measure | measured | cost model or reference |" in table
    for name in ("compile", "train", "vector-env", "batch", "eval", "arena"):
        assert f"\n| {name} | " in table
    assert len([line for line in table.splitlines() if line.startswith("| train |")]) == len(train["counts"])
    assert (tmp_path / "logs" / "train.log").is_file()


def test_a_failing_part_fails_the_suite_after_the_others_ran(tmp_path: Path) -> None:
    result = _suite("--quick", "--parts", "batch", "--fail-part", "machine", "--out", str(tmp_path))
    assert result.returncode == 1, result.stdout[-4000:]
    parts = json.loads((tmp_path / "device_suite.json").read_text())["parts"]
    assert parts["machine"]["status"] == "failed" and parts["machine"]["detail"] == "exit status 3"
    assert parts["batch"]["status"] == "ok" and parts["batch"]["figures"]["rows"]
    table = (tmp_path / "device_suite.md").read_text()
    assert "| machine | **failed**: exit status 3" in table and "\n| batch | " in table
    assert "failed: machine" in result.stdout


def test_a_part_past_its_budget_is_stopped_with_its_children(suite: ModuleType, tmp_path: Path) -> None:
    args = suite.parse_args(["--out", str(tmp_path)])
    ctx = suite.Context(args, 2)
    sleeper = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])"
    part = suite.Part(
        "slow",
        "sleeps",
        1,
        1.0,
        [sys.executable, "-c", f"{sleeper}; print('started', flush=True); time.sleep(60)"],
        lambda ctx, output: {},
    )
    start = time.perf_counter()
    result = suite.run_part(part, ctx, tmp_path / "slow.log")
    assert result.status == "timed out" and not result.ok
    assert time.perf_counter() - start < 30  # the grandchild, holding the pipe, was stopped too
    assert "started" in (tmp_path / "slow.log").read_text()


def test_bad_arguments_are_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    result = _suite("--out", str(tmp_path / "file"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--out:" in result.stderr and "is a file, not a folder" in result.stderr
    result = _suite("--parts", "nosuch")
    assert result.returncode == 2 and "invalid choice: 'nosuch'" in result.stderr
    assert _suite("--help").stdout.startswith("usage:")


ARENA_RUN = {
    "processes": 2,
    "bots": 12,
    "bots_connected": 12,
    "errors_told": 0,
    "bot_errors": {},
    "decisions": 1000,
    "seconds": 3.0,
    "decisions_per_second": 333.3,
    "turnaround_ms_p50": 2.5,
    "turnaround_ms_p99": 14.0,
    "server_cpu_us_per_decision": 1400.0,
    "server_cores": 0.5,
    "bots_cpu_us_per_decision": 500.0,
    "per_process": [
        {"pid": 7, "bots": 5, "decisions": 400, "cpu_seconds": 0.6},
        {"pid": 8, "bots": 7, "decisions": 600, "cpu_seconds": 0.8},
    ],
}
"""A run of benchmarks/arena_processes.py's JSON, as the arena part reads it."""


def test_the_arena_part_runs_the_benchmark_with_the_cores_and_reads_its_figures(
    suite: ModuleType, tmp_path: Path
) -> None:
    ctx = suite.Context(suite.parse_args(["--out", str(tmp_path)]), 16)
    part = suite.arena_part(ctx)
    assert part.command[1].endswith("arena_processes.py") and part.budget_s <= 180
    counts = part.command[part.command.index("--processes") + 1 : part.command.index("--bots")]
    assert counts == ["1", "8", "12"] and part.command[part.command.index("--bots") + 1] == str(4 * 8 * 12)
    assert part.command[part.command.index("--bot-processes") + 1] == "4"
    quick = suite.arena_part(suite.Context(suite.parse_args(["--quick", "--out", str(tmp_path)]), 2))
    assert quick.command[quick.command.index("--processes") + 1 : quick.command.index("--bots")] == ["1", "2"]
    assert quick.command[quick.command.index("--seconds") + 1] == "3"

    path = tmp_path / "parts" / "arena.json"
    path.parent.mkdir()
    config = {"bots": 12, "bot_processes": 2, "players": 3, "tables": 2}
    targets = {"decisions_per_second": 10_000.0, "turnaround_ms_p99": 50.0, "cores": 16}
    path.write_text(json.dumps({"config": config, "targets": targets, "results": [ARENA_RUN]}))
    figures = suite.collect_arena(path)
    assert figures["processes_run"] == [2] and figures["rows"][0]["least_share"] == 0.4
    result = suite.PartResult("arena", "ok", 10.0, 180.0, figures=figures)
    [row] = suite._rows(result, ctx)
    assert (
        row.startswith("| arena | `bourre arena serve --processes 2 --ladder`")
        and "| 333; 2.5 / 14.0 ms; 1,400 us |" in row
    )
    assert row.endswith("on 16 cores |") and "40-60% a process" in row
    assert "--ladder-peers-only" in suite._notes(result)[0]
    # a run whose bots did not all connect, or were told of errors, fails the part, saying which
    results = [{**ARENA_RUN, "bots_connected": 11, "errors_told": 3}]
    path.write_text(json.dumps({"config": config, "targets": targets, "results": results}))
    with pytest.raises(suite.PartError, match="2 process\\(es\\): 11 of 12 bots connected, 3 errors told"):
        suite.collect_arena(path)
