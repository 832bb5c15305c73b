"""``benchmarks/cinch_budget.py``: the cinch search's over-budget positions, found and settled with a larger budget.

The position below is the documented limit of the default budget (docs/rules.md, "Cinch"): a searchable cinch that
100,000 nodes do not settle, so the player is treated as having none. If the search gets faster and settles it, this
test fails, and the docs' figures are to be measured again."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "cinch_budget.py"


@pytest.fixture
def bench(import_benchmark: Callable[[str], ModuleType]) -> ModuleType:
    return import_benchmark("benchmarks.cinch_budget")


def test_a_cinch_past_the_default_budget_is_found_and_settled_by_a_larger_one(bench: ModuleType) -> None:
    result = bench.sweep(players=3, ranks=6, deals=962, seed=0, budgets=[2_000_000])
    assert result.decisions > 10_000
    (found,) = result.over_budget
    assert (found.deal, found.seat) == (961, 0)
    assert found.settled and found.cinch
    assert 100_000 < found.nodes <= 2_000_000
    assert bench.node_seconds([found]) > 0


def test_the_script_prints_each_setting_and_refuses_bad_arguments() -> None:
    run = [sys.executable, str(SCRIPT)]
    ok = subprocess.run([*run, "--players", "2", "4", "--deals", "5"], capture_output=True, text=True, timeout=600)
    assert ok.returncode == 0, ok.stderr[-4000:]
    lines = ok.stdout.splitlines()
    assert lines[0].startswith("2 players, 13 ranks: 5 deals, ") and lines[1].startswith("4 players, 13 ranks")
    assert lines[-1].startswith("search CPU time per node:")
    for bad in (["--players", "9"], ["--deals", "0"], ["--budgets", "1000"]):
        refused = subprocess.run([*run, *bad], capture_output=True, text=True, timeout=600)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert "error:" in refused.stderr
