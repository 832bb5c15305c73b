"""What a new user meets in the first hour: the version, the help of the main job, hints for a misnamed agent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import agents
from train import cli

ROOT = Path(__file__).resolve().parent.parent


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


def test_a_policy_file_named_alone_suggests_ppo_path() -> None:
    with pytest.raises(ValueError, match="a policy file is named ppo:runs/small/model.npz"):
        agents.make("runs/small/model.npz")


def test_a_person_types_discards_a_pass_or_a_card() -> None:
    from bourre_env import actions, core
    from bourre_env.core import cards
    from train.terminal_game import _typed

    hand = cards.parse_many("5C JD 6H 4S 7S")
    legal = [core.PASS, *range(core.STAY_BASE, core.STAY_BASE + 31)]  # every discard but all five
    assert _typed("p", legal, hand, core.DRAW_OR_PASS) == core.PASS
    assert _typed("s", legal, hand, core.DRAW_OR_PASS) == actions.stay([], hand)
    assert _typed("5c, 7S", legal, hand, core.DRAW_OR_PASS) == actions.stay(["5C", "7S"], hand)
    assert _typed("AS", legal, hand, core.DRAW_OR_PASS) is None  # not in the hand
    assert _typed("p", [actions.stay([], hand)], hand, core.DRAW) is None  # no pass in a draw after a declaration
    assert _typed("5C JD 6H 4S 7S", legal, hand, core.DRAW_OR_PASS) is None  # five discards: not among legal
    assert _typed("QH", [actions.play("QH"), actions.play("2H")], hand, core.PLAY) == actions.play("QH")
    assert _typed("QH", [actions.play("2H")], hand, core.PLAY) is None
    assert _typed("hello", legal, hand, core.DRAW_OR_PASS) is None


def test_the_terminal_game_shows_a_legend_and_the_payoffs_once() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "train.cli", "play", "--seats", "human,random,heuristic", "--seed", "3"],
        cwd=ROOT,
        input="s\n" + "1\n" * 10,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    assert out.count("(* the seat to act, D the dealer") == 1
    assert "result: " not in out and out.count("deal 1 over: ") == 1
    assert "player_0 (you): play, stand pat" in out
