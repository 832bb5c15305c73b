"""``benchmarks/cinch_budget.py``: what the cinch's search costs per question, and that it never gives up.

The position below is the one the old 100,000-node budget could not settle in this sweep (docs/benchmarks.md, "The
cinch check"): the player was treated as having no cinch. The exact search, which has no budget, settles it as a
cinch."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "cinch_budget.py"


@pytest.fixture
def bench(import_benchmark: Callable[[str], ModuleType]) -> ModuleType:
    return import_benchmark("benchmarks.cinch_budget")


def test_the_position_past_the_old_budget_is_settled_exactly(bench: ModuleType) -> None:
    result = bench.sweep(players=3, ranks=6, deals=962, seed=0)
    assert result.decisions > 10_000 and len(result.searched) > 5_000
    assert not result.gave_up
    found = max((q for q in result.searched if q.deal == 961), key=lambda q: q.nodes)
    assert found.seat == 0 and found.cinch
    assert 1_000 < found.nodes < 100_000
    p50, p99, top = bench.percentiles([q.nodes for q in result.searched])
    assert p50 <= p99 <= top == max(q.nodes for q in result.searched)


def test_the_script_prints_each_setting_writes_its_corpus_and_refuses_bad_arguments(tmp_path: Path) -> None:
    run = [sys.executable, str(SCRIPT)]
    corpus = tmp_path / "corpus.npz"
    ok = subprocess.run(
        [*run, "--players", "2", "4", "--deals", "5", "--keep", "2", "--corpus", str(corpus)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ok.returncode == 0, ok.stderr[-4000:]
    lines = [line for line in ok.stdout.splitlines() if not line.startswith("  ")]
    assert lines[0].startswith("2 players, 13 ranks: 5 deals, ") and lines[1].startswith("4 players, 13 ranks")
    assert all("0 searches gave up" in line for line in lines[:2])
    assert lines[-1].startswith("corpus: ")
    written = np.load(corpus)
    assert written["states"].shape[0] == written["seats"].shape[0] <= 4
    for bad in (["--players", "9"], ["--deals", "0"], ["--keep", "-1"]):
        refused = subprocess.run([*run, *bad], capture_output=True, text=True, timeout=600)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert "error:" in refused.stderr
