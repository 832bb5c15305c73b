"""``benchmarks/baselines.py``: the table of trainers at equal compute is built right from results (fast, on made-up
runs); its quick mode runs two trainers for a few seconds each, one of each way a run is stopped and exported, rates
them with a tiny ladder and writes the table; and, marked slow (about two minutes on a 2-core machine), every
trainer."""

from __future__ import annotations

import importlib
import importlib.util
import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "baselines.py"


@pytest.fixture
def baselines(import_benchmark: Callable[[str], ModuleType]) -> ModuleType:
    return import_benchmark("benchmarks.baselines")


def test_the_table_has_each_run_a_mean_per_trainer_and_the_skipped(baselines: ModuleType) -> None:
    run = baselines.RunResult
    results = [
        run("batched", 0, steps=1000, wall_seconds=10.0, model="a.npz", rating=0.2, rating_ci95=(0.0, 0.4)),
        run("batched", 1, steps=3000, wall_seconds=10.0, model="b.npz", rating=0.4, rating_ci95=(0.3, 0.5)),
        run("dmc", 0, steps=500, wall_seconds=5.0, note="stopped before its first checkpoint"),
    ]
    skipped = [baselines.Skipped("rllib", "ray is not installed")]
    rows = baselines.table_rows(results, skipped)
    assert [r[0] for r in rows] == ["batched", "batched", "**batched: mean**", "dmc", "**dmc: mean**", "rllib"]
    assert all(len(r) == len(baselines.COLUMNS) for r in rows)
    assert rows[0][2:6] == ("1,000", "100", "10", "+0.200 [+0.000, +0.400]")
    mean = baselines.mean_row("batched", results[:2])
    assert mean["steps"] == 2000 and mean["steps_per_second"] == 200 and mean["rating"] == pytest.approx(0.3)
    half = (0.2 + 0.1) / 2 / 2**0.5  # the mean half-width over sqrt(2 seeds)
    assert mean["rating_ci95"] == pytest.approx((0.3 - half, 0.3 + half))
    assert rows[2][5] == f"+0.300 [{0.3 - half:+.3f}, {0.3 + half:+.3f}]"
    assert rows[3][5] == "not rated" and rows[4][6] == "0 of 1 rated"
    assert rows[5][5] == "not run" and rows[5][6] == "ray is not installed"

    markdown = baselines.markdown_table(rows).splitlines()
    assert markdown[0] == "| " + " | ".join(baselines.COLUMNS) + " |"
    assert len(markdown) == 2 + len(rows) and all(line.count("|") == len(baselines.COLUMNS) + 1 for line in markdown)
    plain = baselines.plain_table(rows)
    assert "batched: mean" in plain and "**" not in plain
    data = baselines.payload(results, skipped, {"minutes": 1.0}, "python benchmarks/baselines.py")
    assert json.loads(json.dumps(data))["rows"] == [list(r) for r in rows]
    assert [m["trainer"] for m in data["means"]] == ["batched", "dmc"] and data["skipped"][0]["trainer"] == "rllib"


def test_every_trainer_has_a_command_with_a_step_budget_past_the_clock(baselines: ModuleType, tmp_path: Path) -> None:
    plan = baselines.Plan(5, 1.0, 1000, "pimc:2", 2, 200, True)
    for trainer in baselines.TRAINERS:
        command = baselines.trainer_command(trainer, tmp_path / trainer, 0, plan)
        assert str(baselines.HUGE) in command and "--seed" in command, trainer


def test_a_run_is_stopped_at_its_budget_even_where_sigint_was_ignored(baselines: ModuleType, tmp_path: Path) -> None:
    """A script started in the background (``&``, nohup) has SIGINT ignored, and its children inherit that: a trainer
    that stops on Python's KeyboardInterrupt would run on until the SIGKILL of the grace period."""
    waits = "import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    print('stopped by SIGINT')\n"
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        wall, status = baselines.run_to_budget([sys.executable, "-c", waits], 1.0, tmp_path / "log.txt")
    finally:
        signal.signal(signal.SIGINT, before)
    assert wall < 30 and status == 0 and "stopped by SIGINT" in (tmp_path / "log.txt").read_text()


def _quick(tmp_path: Path, *trainers: str) -> dict[str, Any]:
    """``--quick`` (of ``trainers``, or all): the JSON it wrote, after checking it wrote the Markdown table too."""
    out = tmp_path / "baselines.json"
    command = [sys.executable, str(SCRIPT), "--quick", "--run-root", str(tmp_path / "runs"), "--json", str(out)]
    command += ["--markdown", str(tmp_path / "baselines.md")] + (["--trainers", *trainers] if trainers else [])
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert (tmp_path / "baselines.md").read_text().startswith("| trainer | seed | steps |")
    data: dict[str, Any] = json.loads(out.read_text())
    return data


@pytest.mark.slow  # a 12 s budget that a cold compile on a loaded machine can spend before the first step
def test_quick_mode_of_a_trainer_and_a_patched_example_rates_both(tmp_path: Path) -> None:
    """The two ways a run is stopped at its budget and turned into a policy: batched PPO, which leaves its model on
    Ctrl-C, and the CleanRL example run in a child that patches it to keep its step count."""
    data = _quick(tmp_path, "batched", "cleanrl")
    assert [r["trainer"] for r in data["runs"]] == ["batched", "cleanrl"] and not data["skipped"]
    for r in data["runs"]:
        assert r["steps"] > 0 and r["model"] is not None and r["rating"] is not None, r
        assert Path(r["model"]).is_file(), r
    assert [m["trainer"] for m in data["means"]] == ["batched", "cleanrl"]


@pytest.mark.slow
def test_quick_mode_trains_rates_and_writes_the_table(tmp_path: Path) -> None:
    data = _quick(tmp_path)
    ran = {r["trainer"] for r in data["runs"]}
    skipped = {s["trainer"] for s in data["skipped"]}
    assert ran | skipped == {"batched", "sb3", "exit", "dmc", "cleanrl", "rllib"} and not ran & skipped
    if importlib.util.find_spec("ray") is None:
        assert "rllib" in skipped
    for r in data["runs"]:
        assert r["seed"] == 0 and r["wall_seconds"] > 0, r
        assert r["model"] is not None and r["rating"] is not None, r  # every trainer leaves a policy the ladder rates
        assert r["steps"] > 0, r
    assert len(data["rows"]) == 2 * len(ran) + len(skipped)
