"""``benchmarks/arena_processes.py``: its quick mode (slow: two servers started as subprocesses, about 30 s) runs the
ladder on 1 then 2 server processes with remote bots and writes every figure, the bots spread over both processes, no
move fallen back; its turnarounds pair only consecutive turns of one match; bots connect from addresses of their own;
bad arguments are refused in one line. No timing is asserted (a shared machine): only that every figure is there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "arena_processes.py"

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads /proc (Linux)")


@pytest.fixture(name="bench")
def bench_module(import_benchmark: Callable[[str], ModuleType]) -> ModuleType:
    return import_benchmark("arena_processes")


@pytest.mark.slow  # two servers of the real command, each started, warmed up, timed and stopped: about 30 s
def test_quick_mode_spreads_bots_over_the_processes_and_writes_every_figure(tmp_path: Path) -> None:
    for module, extra in (("websockets", "arena"), ("sqlalchemy", "arena"), ("uvicorn", "serve")):
        pytest.importorskip(module, reason=f"the {extra} extra: pip install -e '.[{extra}]'")
    out = tmp_path / "arena_processes.json"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    report = json.loads(out.read_text())
    assert report["config"]["quick"] is True and report["config"]["processes"] == [1, 2]
    assert {"cpu", "cpu_count", "load_average"} <= set(report["machine"])
    assert report["targets"] == {"decisions_per_second": 10_000.0, "turnaround_ms_p99": 50.0, "cores": 16}
    runs = report["results"]
    assert [r["processes"] for r in runs] == [1, 2]
    for r in runs:
        assert r["bots_connected"] == r["bots"] == 16 and not r["bot_errors"] and r["errors_told"] == 0
        assert r["decisions"] > 0 and r["decisions_per_second"] > 0 and r["turnarounds"] > 0
        assert 0 < r["turnaround_ms_p50"] <= r["turnaround_ms_p99"] <= r["turnaround_ms_max"]
        assert r["server_cpu_us_per_decision"] > 0 and r["bots_cpu_us_per_decision"] > 0
        processes = r["per_process"]
        assert len(processes) == r["processes"] == len({p["pid"] for p in processes})
        assert sum(p["bots"] for p in processes) == r["bots"]
        # every decision of the window is of a match the database says one of the processes claimed
        assert sum(p["decisions"] for p in processes) == r["decisions"] and r["decisions_of_unknown_matches"] == 0
    two = runs[1]["per_process"]
    assert all(p["bots"] > 0 and p["decisions"] > 0 and p["cpu_seconds"] > 0 for p in two), two
    assert "spread over the server processes" in result.stdout and "\n        2 " in result.stdout


def test_turnarounds_pair_consecutive_turns_of_one_match_only(bench: ModuleType) -> None:
    turns = {
        # turn, act started, act returned: turns 1, 2 and 4 kept (3 fell outside the window); out of order
        "m1": [2.0, 10.5, 10.6, 1.0, 10.0, 10.1, 4.0, 12.0, 12.1],
        "m2": [1.0, 10.2, 10.3, 2.0, 10.35, 10.4],  # its turn 1 and m1's turn 2 are no pair: another match
    }
    assert bench.turnarounds(turns) == pytest.approx([0.4, 0.05])
    assert bench.turnarounds({}).size == 0


def test_each_connection_comes_from_an_address_of_its_own(bench: ModuleType) -> None:
    first = list(zip(range(70_000), bench.bot_addresses(3), strict=False))
    addresses = [a for _, a in first]
    assert len(set(addresses[: bench.MOST_BOTS_A_PROCESS])) == bench.MOST_BOTS_A_PROCESS
    assert all(a.startswith("127.4.") for a in addresses)
    assert not set(addresses) & set(a for _, a in zip(range(1000), bench.bot_addresses(4), strict=False))


def test_cpu_time_and_children_are_read_from_proc(bench: ModuleType) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert child.pid in bench.children(os.getpid())
        assert bench.process_cpu_seconds(os.getpid()) > 0
        assert bench.cpu_of([child.pid])[child.pid] >= 0
    finally:
        child.communicate(b"")
    gone = bench.cpu_of([child.pid])[child.pid]
    assert gone != gone  # NaN: the process is gone


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--processes", "0"], "--processes: expected values in 1.."),
        (["--bots", "2"], "--bots: expected at least --players (4)"),
        (["--tables", "33"], "--tables: expected 1..32"),
        (["--connect-pace", "5"], "--connect-pace: expected seconds in 0..1"),
    ],
)
def test_bad_arguments_are_refused_in_one_line(argv: list[str], said: str) -> None:
    result = subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 2 and said in result.stderr and "Traceback" not in result.stderr, result.stderr
