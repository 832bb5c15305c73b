"""``benchmarks/arena_outside.py``: a tiny run (a real ``bourre arena serve`` in a subprocess, three bots in processes
of their own, one match of two deals, one round) prints and writes every figure, and they are sane: the decisions
the bots counted are the server's, none left to the fallback, a positive CPU a decision, p50 under p99. Bad flags are
refused in one line. No timing is asserted (a shared machine)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "arena_outside.py"
NODE_MODULES = ROOT / "train" / "arena" / "examples" / "node_modules"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the server's CPU from /proc (Linux)")


def tiny_run(tmp_path: Path, bots: str) -> tuple[str, dict]:
    for module, extra in (("websockets", "arena"), ("sqlalchemy", "arena"), ("uvicorn", "serve")):
        pytest.importorskip(module, reason=f"the {extra} extra: pip install -e '.[{extra}]'")
    out = tmp_path / "outside.json"
    command = [sys.executable, str(SCRIPT), "--bots", bots, "--players", "3", "--deals", "2", "--rounds", "1"]
    done = subprocess.run(
        [*command, "--timeout", "500", "--json", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout, json.loads(out.read_text())


@pytest.mark.parametrize("bots", ["python", "node"])
def test_a_tiny_run_prints_and_writes_sane_figures(tmp_path: Path, bots: str) -> None:
    if bots == "node" and (shutil.which("node") is None or not (NODE_MODULES / "ws").is_dir()):
        pytest.skip("node or its ws package is missing (npm ci --prefix train/arena/examples)")
    stdout, report = tiny_run(tmp_path, bots)
    assert "| tree | tables | loop | runs |" in stdout and "| this checkout | 1 |" in stdout
    assert report["machine"]["cpu_count"] and report["settings"]["deals"] == 2
    assert [t["label"] for t in report["trees"]] == ["this checkout"]
    assert report["trees"][0]["event_loop"] in ("uvloop", "asyncio")
    (run,) = report["runs"]
    assert run["statuses"] == ["finished"] and run["games"] == 2 and run["tables"] == 1
    assert run["decisions"] == run["server_decisions"] > 0 and run["fallbacks"] == 0
    for key in ("server_cpu_us_per_decision", "decisions_per_second", "round_trip_ms_p50", "bots_cpu_us_per_decision"):
        assert math.isfinite(run[key]) and run[key] > 0, key
    assert run["round_trip_ms_p50"] <= run["round_trip_ms_p99"] < 10_000
    assert (
        0
        <= run["loop_user_us_per_decision"] + run["loop_system_us_per_decision"]
        <= 2 * run["server_cpu_us_per_decision"]
    )
    assert 0 <= run["loop_sleeps_per_decision"] < 100
    (row,) = report["summary"]
    assert row["ratio"] is None and row["server_cpu_us_per_decision"] == run["server_cpu_us_per_decision"]


@pytest.mark.parametrize(
    "bad",
    [
        ["--tables", "0"],
        ["--deals", "0"],
        ["--rounds", "0"],
        ["--timeout", "nan"],
        ["--think", "-1"],
        ["--against", "no-such-commit"],
    ],
)
def test_bad_flags_are_refused_in_one_line(bad: list[str]) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--bots", "python", *bad], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert bad[0] in done.stderr.strip().splitlines()[-1]
