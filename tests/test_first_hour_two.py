"""Issue 49's "what a person sees" points: bench's usage, the terminal game's words, train's progress lines, the
documented example outputs, the test suite's duration report and the README's torch install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from train import cli

ROOT = Path(__file__).resolve().parent.parent


def _bourre(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "train.cli", *args], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_bench_help_lists_every_benchmark_with_a_line_and_exits_0(flag: str) -> None:
    result = _bourre("bench", flag)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("usage: bourre bench {")
    for name in cli.BENCHMARKS:
        described = [line for line in lines if line.split()[:1] == [name]]
        assert len(described) == 1 and len(described[0].split()) > 3, (name, result.stdout)


def test_bench_without_a_name_says_the_same_usage_and_an_error() -> None:
    help_text = _bourre("bench", "--help").stdout
    for args in ((), ("nosuch",)):
        result = _bourre("bench", *args)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert result.stderr.startswith(help_text)
        assert result.stderr.rstrip().splitlines()[-1].startswith("bourre bench: error: ")
