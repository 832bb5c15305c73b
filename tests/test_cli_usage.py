"""What the command line prints about itself: ``bourre --version``, ``bourre train --help`` with the trainers and a
short run, and ``bourre bench``'s usage, with a line for every benchmark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from train import cli
from train.bench import BENCHMARKS

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
    for name in BENCHMARKS:
        described = [line for line in lines if line.split()[:1] == [name]]
        assert len(described) == 1 and len(described[0].split()) > 3, (name, result.stdout)


def test_bench_without_a_name_says_the_same_usage_and_an_error() -> None:
    help_text = _bourre("bench", "--help").stdout
    for args in ((), ("nosuch",)):
        result = _bourre("bench", *args)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert result.stderr.startswith(help_text)
        assert result.stderr.rstrip().splitlines()[-1].startswith("bourre bench: error: ")


def test_bourre_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip().startswith("bourre-rl 0.")


def test_train_help_lists_the_trainers_and_a_short_run() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "train.cli", "train", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "120", "PATH": ""},
    ).stdout
    assert "--trainer {batched,sb3,exit,dmc}" in out
    assert "A short run: bourre train --total-timesteps" in out
    for flag in ("--seed", "--run-dir", "--total-timesteps", "--workers", "--hidden"):
        assert flag in out
