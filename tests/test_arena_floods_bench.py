"""``benchmarks/arena_floods.py``: its quick run (a real ``bourre arena serve`` in a subprocess, two repeats of three
conditions, about 15 s) times a match and GETs alone and under each flood and writes every figure; both floods
reached the server; bad arguments are refused in one line. No timing is asserted (a shared machine)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "arena_floods.py"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="floods from 127.0.0.2 (Linux)")


def test_the_quick_run_measures_every_condition_and_writes_every_figure(tmp_path: Path) -> None:
    for module, extra in (("websockets", "arena"), ("sqlalchemy", "arena"), ("uvicorn", "serve")):
        pytest.importorskip(module, reason=f"the {extra} extra: pip install -e '.[{extra}]'")
    out = tmp_path / "floods.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "| flood | match (s), mean [95% CI] | x alone |" in done.stdout and "[2/2]" in done.stderr
    report = json.loads(out.read_text())
    assert report["targets"] == {"ratio": 1.5, "get_ms_p50": 100.0} and report["machine"]["cpu_count"]
    assert report["settings"]["quick"] is True and report["settings"]["repeats"] == 2
    results = {r["flood"]: r for r in report["results"]}
    assert list(results) == ["none", "pings", "gets"]
    for r in results.values():
        assert r["repeats"] == 2 and len(r["match_seconds"]) == 2 and r["games"] == 6 and r["gets"] == 20
        low, high = r["match_seconds_ci95"]
        assert low <= r["match_seconds_mean"] <= high and r["ratio"] > 0
        low, high = r["get_ms_p50_ci95"]
        assert low <= r["get_ms_p50"] <= high and r["get_ms_p50"] <= r["get_ms_p90"]
    assert results["none"]["flood_counts"] == {} and results["none"]["ratio"] == 1.0
    assert results["pings"]["flood_counts"]["pings written"] > 0 and results["pings"]["flood_counts"]["connections"] > 0
    assert results["gets"]["flood_counts"]["answered 200"] > 0


def test_the_median_interval_holds_the_median_between_order_statistics(
    import_benchmark: Callable[[str], ModuleType],
) -> None:
    bench = import_benchmark("arena_floods")
    median, low, high = bench.median_interval([float(x) for x in range(100)])
    assert median == 49.5 and (low, high) == (40.0, 59.0)  # ranks 50 -+ 9.8: the binomial's 95%
    assert bench.median_interval([3.0]) == (3.0, 3.0, 3.0)


@pytest.mark.parametrize("bad", [["--deals", "0"], ["--repeats", "-1"], ["--settle", "nan"]])
def test_bad_arguments_are_refused_in_one_line(bad: list[str]) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), *bad], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert bad[0] in done.stderr.strip().splitlines()[-1]
