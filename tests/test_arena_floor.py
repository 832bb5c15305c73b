"""``benchmarks/arena_floor.py`` runs and prints each of its figures. No timing is asserted (a shared machine)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_it_prints_the_floor_and_each_piece() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "arena_floor.py"),
            "--players",
            "3",
            "--deals",
            "5",
            "--repeat",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    lines = result.stdout.splitlines()
    for piece in ("floor", "game on a Recording env", "game on the plain env", "turn:"):
        (line,) = [x for x in lines if x.startswith(piece)]
        assert float(line.split()[-1]) > 0
