"""The main job's documented result is what the code prints: ``bourre train`` with no arguments is deterministic, so
the table of ``docs/training.md`` ("The main job") must equal the final evaluation of a fresh run, digit for digit.
A change that moves the run's course fails here until the table is updated (``python -m pytest -m slow
tests/test_main_job.py``; about 5 to 10 minutes on 2 cores). A different CPU may round torch's sums differently and
land elsewhere: the table holds for this project's machine, which the docs name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def documented_rows() -> list[str]:
    """The rows of the main job's table in docs/training.md (the one that follows its heading)."""
    text = (ROOT / "docs" / "training.md").read_text()
    section = text.split("## The main job", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| random |") or line.startswith("| heuristic |")]
    assert len(rows) == 2, "docs/training.md: the main job's table lost its rows"
    return rows


def test_the_documented_table_has_the_report_layout() -> None:
    from train.eval.report import TextTable, markdown_table

    header = markdown_table(TextTable(["field"], [False], [["random"]]))[0]
    assert header.startswith("| field |") and all(row.count("|") == 10 for row in documented_rows())


@pytest.mark.slow
def test_the_main_job_prints_the_documented_table(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "train.cli", "train", "--run-dir", str(run_dir), "--no-progress"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = (run_dir / "report.md").read_text().splitlines()
    printed = [line for line in report if line.startswith("| random |") or line.startswith("| heuristic |")]
    assert printed == documented_rows(), "the main job's result moved: update the table of docs/training.md"
