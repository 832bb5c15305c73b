"""Example outputs on the docs pages: docs/evaluation.md's rerun and compared (all but the time and the worker
count), and an example that no test reruns marked as an illustration."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


EVALUATION_TIME_LINE = re.compile(r"^\d+\.\d s with \d+ workers?; wrote runs/eval/eval\.json$")


def _evaluation_example() -> tuple[str, list[str], list[str]]:
    """docs/evaluation.md's example: the paragraph before it, the command's arguments, and the output shown."""
    text = (ROOT / "docs" / "evaluation.md").read_text()
    section = text.split("## An example: the heuristic against a random field", 1)[1]
    intro, block = section.split("```\n", 1)
    block = block.split("```\n", 1)[0]
    command, *shown = block.rstrip("\n").splitlines()
    return intro, shlex.split(command.removeprefix("$ bourre ")), shown


def test_the_evaluation_example_says_how_it_is_checked_and_what_varies() -> None:
    intro, args, shown = _evaluation_example()
    assert args[0] == "eval" and "--workers" not in args  # the default worker count, as the docs say it is
    assert "-k evaluation_example" in intro and "tests/test_docs_examples.py" in intro
    assert "defaults" in intro and "one per CPU" in intro
    assert EVALUATION_TIME_LINE.match(shown[-1]), shown[-1]
    assert "with 1 worker;" not in shown[-1]  # written on a 2-CPU machine, whose default is 2 workers


@pytest.mark.slow
def test_evaluation_example_is_what_the_command_prints(tmp_path: Path) -> None:
    """docs/evaluation.md's example, rerun (about 30 s on 2 cores): every line but the time and worker count."""
    _, args, shown = _evaluation_example()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "104"}
    result = subprocess.run(
        [sys.executable, "-m", "train.cli", *args], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=900
    )
    assert result.returncode == 0, result.stderr[-3000:]
    printed = result.stdout.rstrip("\n").splitlines()
    assert EVALUATION_TIME_LINE.match(printed[-1]), printed[-1]
    assert printed[:-1] == shown[:-1], "the evaluation moved: rerun the command and update docs/evaluation.md"


@pytest.mark.parametrize(
    ("page", "block_start"),
    [("benchmarks.md", "| Change   | Before"), ("hand_history.md", "deals[0].actions[7].action: 3 is illegal")],
)
def test_an_example_output_that_no_test_reruns_is_marked_as_an_illustration(page: str, block_start: str) -> None:
    text = (ROOT / "docs" / page).read_text()
    before = text[: text.index(block_start)]
    assert "illustration" in before[-400:]
