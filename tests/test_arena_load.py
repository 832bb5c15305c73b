"""``benchmarks/arena_load.py``: the arena's load test at full size (100 remote bots, 25 tables at once, 20,000
decisions over real WebSockets, about 35 s on the shared 2-core machine), which checks the database afterwards and
exits 1 on any game lost or doubled or any bot told of a game not stored for it; and its ``audit`` on made-up
faults, so that a pass means something. No timing is asserted (a shared machine): only that every figure is there."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "arena_load.py"


@pytest.fixture(name="load")
def load_module(import_benchmark: Callable[[str], ModuleType]) -> ModuleType:
    return import_benchmark("arena_load")  # by its own name: it imports arena_speed by name


@pytest.mark.slow  # a full load run (30-60 s); its audit and its arguments are checked below on every run
def test_full_size_loses_and_doubles_nothing_and_reports_every_figure(tmp_path: Path) -> None:
    for module, extra in (("websockets", "arena"), ("sqlalchemy", "arena"), ("uvicorn", "serve")):
        pytest.importorskip(module, reason=f"the {extra} extra: pip install -e '.[{extra}]'")
    out = tmp_path / "arena_load.json"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--json", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=900
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "no game lost or doubled" in result.stdout
    report = json.loads(out.read_text())
    config, r = report["config"], report["result"]
    assert (config["tables"], config["players"], config["decisions"]) == (25, 4, 20_000)
    assert {"cpu", "cpu_count", "load_average"} <= set(report["machine"])
    assert r["bots"] == r["bots_connected"] == 100 and r["tables_peak"] == 25
    assert r["stopped"] == "decisions" and r["decisions"] >= 20_000 and r["statuses"] == ["finished"]
    assert r["fallbacks"] == 0 and r["disconnects"] == 0 and r["round_trips"] == r["decisions"]
    for key in (
        "decisions_per_second",
        "round_trip_ms_p50",
        "round_trip_ms_p99",
        "server_cpu_us_per_decision",
        "bots_cpu_us_per_decision",
        "server_rss_mib_peak",
        "bot_process_rss_mib_peak",
    ):
        assert isinstance(r[key], float) and r[key] > 0, key
    audit = r["audit"]
    assert r["problems"] == [] and audit["faults"] == {}
    assert audit["matches"] == r["matches"] + 1  # the warm-up's match too
    assert audit["games_stored"] == audit["games_expected"] == r["games"] + 1  # its 1 deal, played once


def test_the_audit_finds_every_kind_of_fault(load: ModuleType) -> None:
    asked = {"m1": ["a", "b"], "m2": ["b", "c"]}
    deals = {"m1": (2, 2), "m2": (4, 2)}  # (deals, seats): deal k played once, in rotation k % seats
    statuses = {"m1": "finished", "m2": "finished"}
    games = [("m1", 0, 0), ("m1", 1, 1), ("m2", 0, 0), ("m2", 1, 1), ("m2", 2, 0), ("m2", 3, 1)]
    told = {
        "a": [("m1", 0, 0), ("m1", 1, 1)],
        "b": [("m1", 0, 0), ("m1", 1, 1), ("m2", 0, 0), ("m2", 1, 1), ("m2", 2, 0), ("m2", 3, 1)],
        "c": [("m2", 0, 0), ("m2", 1, 1), ("m2", 2, 0), ("m2", 3, 1)],
    }
    clean = load.audit(asked, deals, statuses, games, told)
    assert clean["faults"] == {} and clean["problems"] == [] and clean["games_stored"] == clean["games_expected"] == 6

    faulty = load.audit(
        asked,
        deals,
        {**statuses, "m2": "running", "m3": "finished"},
        [g for g in games if g != ("m2", 3, 1)] + [("m1", 1, 1), ("m1", 0, 1), ("m3", 0, 0)],
        {**told, "a": told["a"] + [("m1", 0, 0)], "c": told["c"][:-1] + [("m2", 3, 1)] + [("m1", 0, 0)]},
    )
    assert faulty["faults"] == {
        "stray_matches": 1,  # m3, never asked
        "unfinished_matches": 1,  # m2 running
        "stray_games": 2,  # m3's game, and deal 0 of m1 in a rotation it is not played in
        "doubled_games": 1,  # m1/1/1 twice
        "lost_games": 1,  # m2/3/1
        "told_twice": 1,  # a of m1/0/0
        "told_not_stored": 3,  # c of m2/3/1 (lost) and of m1/0/0 (not its match); b of m2/3/1
    }, faulty["problems"]
    assert len(faulty["problems"]) == sum(faulty["faults"].values())


def test_bad_arguments_are_refused_in_one_line() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--tables", "33"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 2 and "--tables: expected 1..32" in result.stderr
