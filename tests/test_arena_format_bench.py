"""``benchmarks/arena_format.py``: its quick run (two cells of 30 games, the control variates on, two workers) prints
both tables and writes every figure, and where the candidate is the field, today's rotations and the single-deal
format with par games both centre on 0 and agree within their intervals."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "arena_format.py"


@pytest.fixture
def bench(import_benchmark: Callable[[str], ModuleType]) -> ModuleType:
    return import_benchmark("benchmarks.arena_format")


def _contains(figure: dict, x: float) -> bool:
    low, high = figure["ci95"]
    return low <= x <= high


def test_the_quick_run_rates_both_formats_and_the_field_against_itself_is_zero(tmp_path: Path) -> None:
    out = tmp_path / "format.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--aivat", "--workers", "2", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("| candidate | field |"))
    for column in ("(a) rotations", "(b) single + par", "b/a", "b/a per decision", "(c) unpaired", "(d) b + aivat"):
        assert f"| {column} |" in header
    assert any(line.startswith("| candidate | cells | decisions (a / b) | rating (a)") for line in lines)
    assert "seed 0" in lines[0] and "[2/2]" in done.stderr

    data = json.loads(out.read_text())
    assert data["settings"]["seed"] == 0 and data["machine"]["cpu_count"]
    cells = {(c["candidate"], c["field"], c["players"]): c for c in data["cells"]}
    assert set(cells) == {("random", "random", 3), ("heuristic:tight", "random", 3)}
    for cell in cells.values():
        a, b = cell["rotations"], cell["single"]
        assert a["games"] == b["games"] == 30 and a["deals"] == 10 and b["deals"] == 30
        assert a["decisions"] > 30 and b["decisions"] > 30  # at least one decision a game: play or pass
        assert cell["ratio"] == pytest.approx(b["replacement"]["half_width"] / a["replacement"]["half_width"])
        per_decision = cell["ratio"] * math.sqrt(b["decisions"] / a["decisions"])
        assert cell["ratio_per_decision"] == pytest.approx(per_decision)
        for figure in (a["replacement"], b["replacement"], b["unpaired"], a["aivat"], b["aivat"]):
            low, high = figure["ci95"]
            assert low <= figure["mean"] <= high and figure["half_width"] > 0

    same = cells[("random", "random", 3)]
    a, b = same["rotations"]["replacement"], same["single"]["replacement"]
    assert _contains(a, 0.0) and _contains(b, 0.0)
    assert abs(a["mean"] - b["mean"]) <= a["half_width"] + b["half_width"]
    assert _contains(same["single_par_seeded"]["replacement"], 0.0) and _contains(same["single"]["unpaired"], 0.0)

    ratings = {r["candidate"]: r for r in data["ratings"]}
    assert ratings["random"]["rotations"]["mean"] == pytest.approx(a["mean"])  # one cell: the rating is the cell


def test_the_unpaired_interval_is_that_of_two_independent_samples(bench: ModuleType) -> None:
    x, y = np.array([1.0, 3.0, 2.0, 6.0]), np.array([0.0, 0.5, 1.0, 0.5, 0.0])
    figure = bench.unpaired(x, y)
    vx, vy = x.var(ddof=1) / 4, y.var(ddof=1) / 5
    df = int((vx + vy) ** 2 / (vx**2 / 3 + vy**2 / 4))
    assert figure["mean"] == pytest.approx(3.0 - 0.4)
    assert figure["half_width"] == pytest.approx(bench.t_quantile(0.975, df) * math.sqrt(vx + vy))


def test_a_bad_agent_spec_is_one_line() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--candidates", "no-such-agent", "--games", "30"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no-such-agent" in done.stderr.strip().splitlines()[-1]
