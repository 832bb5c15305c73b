"""``bourre eval --out`` on an existing file, and ``bourre play --rule`` against the command's own options: each
refused in one line, exit status 2, nothing overwritten."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from train import cli


@pytest.mark.parametrize("what", [["--candidate", "random"], ["--tournament", "random", "random"]])
def test_eval_out_on_an_existing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], what: list[str]) -> None:
    target = tmp_path / "results"
    target.write_text("keep me")
    assert cli.main(["eval", *what, "--deals", "1", "--no-progress", "--out", str(target)]) == 2
    assert "is a file" in capsys.readouterr().err and target.read_text() == "keep me"


def test_play_refuses_rules_that_contradict_its_own_options(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert cli.main(["play", "--seats", "human,random,random", "--rule", "num_players=5"]) == 2
    assert "--rule num_players=5 contradicts --seats" in capsys.readouterr().err
    assert cli.main(["play", "--seats", "human,random", "--deals", "2", "--rule", "deals_per_episode=3"]) == 2
    assert "contradicts --deals" in capsys.readouterr().err
    assert cli.main(["play", "--seats", "human,random,random", "--rule", "num_players=3", "--seed", "0"]) == 0
