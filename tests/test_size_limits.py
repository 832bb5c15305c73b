"""Counts bounded before the work: a network too large for memory, and ``bourre play``'s number of deals."""

from __future__ import annotations

from pathlib import Path

import pytest

from train import cli
from train.ppo.args import Args


def test_a_network_too_large_for_memory_is_refused_before_the_run_folder(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = Args(hidden=(100_000, 100_000), run_dir=run_dir, progress=False)
    with pytest.raises(ValueError, match="--hidden 100000 100000 needs about"):
        args.validate()
    code = cli.main(["train", "--hidden", "100000", "100000", "--run-dir", str(run_dir), "--no-progress"])
    assert code == 2
    assert not run_dir.exists() or not any(run_dir.iterdir())


def test_sb3_refuses_a_network_too_large_for_memory() -> None:
    from train.sb3.trainer import Args as SB3Args

    with pytest.raises(ValueError, match="--hidden 100000 100000 needs about"):
        SB3Args(hidden=(100_000, 100_000)).validate()


def test_play_deals_are_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["play", "--seats", "random,random", "--deals", "1000000000000"])
    assert exit_info.value.code == 2
    assert "expected an integer from 1 to 10,000" in capsys.readouterr().err
