"""``benchmarks/arena_timing.py``: one short match with the pacing off and one with it on, every figure written;
bad arguments refused in one line. No timing is asserted (the figures are in docs/arena.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("websockets", reason="the arena extra: pip install -e '.[arena]'")
pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")
pytest.importorskip("uvicorn", reason="the serve extra: pip install -e '.[serve]'")

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "arena_timing.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_a_short_run_writes_both_matches_figures(tmp_path: Path) -> None:
    out = tmp_path / "timing.json"
    result = _run("--opponent", "heuristic", "--deals", "6", "--shuffles", "50", "--json", str(out))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    report = json.loads(out.read_text())
    assert report["config"]["opponent"] == "heuristic" and "cpu_count" in report["machine"]
    runs = report["results"]
    assert [r["paced"] for r in runs] == [False, True]
    assert runs[0]["gaps"] == runs[1]["gaps"] > 0  # the same deals and the same bot's moves: the same gaps
    for run in runs:
        assert 0.5 <= run["base_rate"] <= run["best_threshold_accuracy"] <= 1.0
        assert 0 < run["p_value"] <= 1 and run["median_ms_by_legal_moves"]
    assert "pacing" in result.stdout and "base rate" in result.stdout


@pytest.mark.parametrize(
    ("args", "says"), [(["--deals", "0"], "--deals: 1 to 1000"), (["--shuffles", "0"], "--shuffles: 1 to 100000")]
)
def test_bad_arguments_are_refused_in_one_line(args: list[str], says: str) -> None:
    result = _run(*args)
    assert result.returncode == 2 and says in result.stderr and "Traceback" not in result.stderr
