"""``benchmarks/arena_speed.py``: its quick mode plays real matches of remote bots over sockets and writes every
figure; every decision is answered by a bot, none by the fallback. No timing is asserted (a shared machine)."""

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
SCRIPT = ROOT / "benchmarks" / "arena_speed.py"


@pytest.mark.parametrize("stub", [False, True], ids=["turns", "stub-turns"])
def test_quick_mode_writes_every_figure_and_no_move_falls_back(tmp_path: Path, stub: bool) -> None:
    out = tmp_path / "arena_speed.json"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(out), *(["--stub-turns"] if stub else [])],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    report = json.loads(out.read_text())
    assert {"config", "machine", "targets", "bots_cpu_seconds", "results"} <= set(report)
    assert report["config"]["quick"] is True and {"cpu", "cpu_count", "load_average"} <= set(report["machine"])
    assert report["config"]["stub_turns"] is stub
    runs = report["results"]
    assert [r["tables"] for r in runs] == report["config"]["tables"]
    keys = {
        "decisions",
        "fallbacks",
        "disconnects",
        "round_trips",
        "seconds",
        "decisions_per_second",
        "round_trip_ms_p50",
        "round_trip_ms_p99",
        "server_cpu_us_per_decision",
        "statuses",
    }
    for run in runs:
        assert keys <= set(run), sorted(keys - set(run))
        assert run["statuses"] == ["finished"]
        # every decision answered by a bot, each answer timed once
        assert run["decisions"] > 0 and run["fallbacks"] == 0 and run["disconnects"] == 0
        assert run["round_trips"] == run["decisions"]


def test_bad_arguments_are_refused_in_one_line() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--tables", "0"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 2 and "--tables: expected values in 1..32" in result.stderr
