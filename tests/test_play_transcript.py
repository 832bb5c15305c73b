"""``bourre play``'s words: docs/play.md's transcript rerun and compared line for line, forced moves said, the
trick list's leader and winner, each result in words, the legend and the payoffs once."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from train import cli

ROOT = Path(__file__).resolve().parent.parent


def _documented_transcript(page: Path) -> tuple[str, list[str], str]:
    """The scripted game of a docs page: its piped input, the ``bourre play`` arguments, and the output shown."""
    block = page.read_text().split("```console\n", 1)[1].split("\n```", 1)[0]
    command, _, shown = block.partition("\n")
    piped, _, invocation = command.removeprefix("$ printf '").partition("' | bourre play ")
    return piped.replace("\\n", "\n"), shlex.split(invocation), shown + "\n"


@pytest.fixture(scope="module")
def played() -> str:
    """What the command of docs/play.md's transcript prints, run now."""
    piped, args, _ = _documented_transcript(ROOT / "docs" / "play.md")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "train.cli", "play", *args],
        input=piped,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_the_play_page_shows_the_output_of_its_command_exactly(played: str) -> None:
    shown = _documented_transcript(ROOT / "docs" / "play.md")[2]
    assert [line.rstrip() for line in played.splitlines()] == shown.splitlines()  # an editor may trim the page's


def test_a_forced_move_is_played_for_the_person_and_said(played: str) -> None:
    shown = played
    lines = shown.splitlines()
    forced = [i for i, line in enumerate(lines) if line.startswith("only one legal move (")]
    assert forced, "the documented deal has a forced move"
    for i in forced:
        assert lines[i].endswith(": played for you") and lines[i + 1].startswith("player_0 (you): play ")
        assert not lines[i - 1].startswith("   1) ")  # no menu of one choice
    assert all("[1-1," not in line for line in lines)  # never asked to choose among one


def test_the_trick_list_marks_the_leader_and_the_winner(played: str) -> None:
    shown = played
    final = [line for line in shown.splitlines() if line.startswith("trick ") and ": p" in line][-5:]
    assert [line.split(":")[0] for line in final] == [f"trick {t}" for t in range(1, 6)]
    for line in final:
        plays = line.split(": ", 1)[1].split("  -> ")[0].split(" p")
        assert plays[0].endswith(" (led)") and line.count("(led)") == 1  # the leader first, marked
        assert " -> won by player_" in line


def test_the_end_of_a_deal_says_what_each_result_means(played: str) -> None:
    shown = played
    tail = shown.split("deal 1 over: ", 1)[1].splitlines()[1:]
    assert len(tail) == 4 and any("bourré: took no trick" in line for line in tail)
    assert any("won the pot" in line for line in tail)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_pass_and_a_tie_are_said_in_words(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 1 ends in a tie for the most tricks, seed 2 has seats that pass (the scan behind docs/play.md)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("s\n" + "1\n" * 10))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["play", "--seats", "human,heuristic,random,heuristic", "--seed", str(seed)]) == 0
    tail = out.getvalue().split("deal 1 over: ", 1)[1]
    expected = "tied for the most tricks (2): no one wins, the pot carries" if seed == 1 else "passed: sat the deal out"
    assert expected in tail


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
