"""``benchmarks/cinch_tail.py``: the rate of slow cinch questions in random play, with its Poisson interval."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "cinch_tail.py"


@pytest.fixture(name="bench")
def cinch_tail(import_benchmark: Callable[[str], ModuleType]) -> ModuleType:
    return import_benchmark("benchmarks.cinch_tail")


def test_the_poisson_interval_is_garwoods(bench: ModuleType) -> None:
    assert bench.poisson_interval(0) == (0.0, pytest.approx(3.6889, abs=1e-3))
    low, high = bench.poisson_interval(1)
    assert low == pytest.approx(0.0253, abs=1e-3) and high == pytest.approx(5.5716, abs=1e-3)
    low, high = bench.poisson_interval(9)
    assert low == pytest.approx(4.1154, abs=1e-3) and high == pytest.approx(17.0848, abs=1e-3)


def test_the_script_counts_slow_questions_writes_them_and_refuses_bad_arguments(tmp_path: Path) -> None:
    out = tmp_path / "tail.json"
    run = [sys.executable, str(SCRIPT)]
    ok = subprocess.run(
        [*run, "--players", "5", "--max-discard", "3", "--tables", "8", "--seconds", "1", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ok.returncode == 0, ok.stderr[-4000:]
    last = ok.stdout.splitlines()[-1]
    assert (
        last.startswith("5 players, 13 ranks, 3 discards at most, 8 tables, seeds 0-")
        and "per 100 million decisions [95% CI" in last
    )
    written = json.loads(out.read_text())
    assert (
        written["players"] == 5
        and written["max_discard"] == 3
        and written["decisions"] > 0
        and written["positions"] == []
    )
    bad_arguments = (
        ["--players", "9"],
        ["--seconds", "0"],
        ["--limit-ms", "-1"],
        ["--players", "8", "--ranks", "6"],
        ["--max-discard", "0"],
    )
    for bad in bad_arguments:
        refused = subprocess.run([*run, *bad], capture_output=True, text=True, timeout=600)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert "error:" in refused.stderr
