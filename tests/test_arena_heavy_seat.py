"""``benchmarks/arena_heavy_seat.py``: its quick mode plays the bots' matches beside no heavy table, one in a thread
and one in a worker process, and writes every figure; the heavy table moved in both. No timing is asserted."""

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
SCRIPT = ROOT / "benchmarks" / "arena_heavy_seat.py"


def test_quick_mode_writes_every_figure_of_every_mode(tmp_path: Path) -> None:
    out = tmp_path / "arena_heavy_seat.json"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    report = json.loads(out.read_text())
    assert report["config"]["quick"] is True and {"cpu", "cpu_count", "load_average"} <= set(report["machine"])
    runs = report["results"]
    assert [r["mode"] for r in runs] == ["none", "thread", "process"]
    for run in runs:
        assert run["statuses"] == ["finished"] and run["fallbacks"] == 0 and run["round_trips"] > 0
        assert run["round_trip_ms_p50"] is not None and run["round_trip_ms_p99"] is not None
    assert runs[0]["heavy_moves"] == 0
