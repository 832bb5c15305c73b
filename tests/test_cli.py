"""The ``bourre`` command line: smoke runs with tiny budgets, and a scripted game at the terminal."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bourre_env import core
from bourre_env.actions import describe
from bourre_env.bourre_v0 import raw_env
from bourre_env.core import cards
from bourre_env.core.rules import presets
from bourre_env.view import StateView
from train import cli, terminal_game


def _bourre(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "train.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def test_help_lists_the_commands(tmp_path: Path) -> None:
    result = _bourre("--help", cwd=tmp_path)
    assert result.returncode == 0
    assert "eval" in result.stdout and "play" in result.stdout


def test_eval_end_to_end(tmp_path: Path) -> None:
    result = _bourre(
        "eval",
        "--candidate",
        "random",
        "--field",
        "random",
        "--players",
        "3",
        "4",
        "--deals",
        "25",
        "--seed",
        "1",
        "--workers",
        "2",
        "--out",
        "out",
        "--rule",
        "tie=divide",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "3 players" in result.stdout and "all-field table" in result.stdout
    header = next(line for line in result.stdout.splitlines() if "table advantage" in line)
    assert "replacement advantage" in header  # both measures, side by side
    report = json.loads((tmp_path / "out" / "eval.json").read_text())
    assert [t["players"] for t in report["tables"]] == [3, 4]
    for t in report["tables"]:  # each measure's row in the summary, as in the report
        row = next(line for line in result.stdout.splitlines() if line.split("│")[1:2] == [f" {t['players']:>7} "])
        assert f"{t['advantage']:+.3f}" in row and f"{t['replacement_advantage']:+.3f}" in row
        assert len(t["replacement_advantage_ci95"]) == 2 and "chips" in t["baseline"]
    assert report["rule_options"] == {"tie": "divide"} and report["deals"] == 25


def test_tournament_end_to_end(tmp_path: Path) -> None:
    result = _bourre(
        "eval",
        "--tournament",
        "random",
        "random",
        "--players",
        "3",
        "--deals",
        "10",
        "--out",
        "t",
        "--no-progress",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "mu-3sig" in result.stdout and "vs all-random" in result.stdout
    report = json.loads((tmp_path / "t" / "tournament.json").read_text())
    assert report["baseline"] == "random" and "replacement_advantage" in report["tables"][0]["agents"][0]
    for name in ("tournament.json", "tournament.md", "tournament_3p.png"):
        assert (tmp_path / "t" / name).stat().st_size > 0


def test_eval_reports_bad_specs_without_a_traceback(tmp_path: Path) -> None:
    result = _bourre("eval", "--candidate", "nobody", "--deals", "2", "--no-progress", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown agent 'nobody'" in result.stderr and "Traceback" not in result.stderr


def _play(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], stdin: str, *args: str
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = cli.main(["play", *args])
    return code, capsys.readouterr().out


def test_play_a_full_deal_from_scripted_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # "2" plays standing pat at the draw, then "1" always picks the first legal card; bad lines first.
    code, out = _play(
        monkeypatch, capsys, "hello\n0\n2\n" + "1\n" * 20, "--seats", "human,random,random", "--seed", "11"
    )
    assert code == 0
    assert "'hello' is not one of the choices" in out and "'0' is not one of the choices" in out
    assert "player_0 (you): play, stand pat" in out
    assert "player_0 holds:" in out  # the human's view
    for other in ("player_1 holds", "player_2 holds"):
        assert other not in out  # never another player's hand
    assert "deal 1 over: player_0 (you)" in out and "trick 5 goes to" in out


def test_play_several_deals_keeps_totals(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _play(
        monkeypatch, capsys, "1\n" * 60, "--seats", "random,human,random,random", "--seed", "2", "--deals", "2"
    )
    assert code == 0
    assert "deal 1 over" in out and "deal 2 over" in out and out.count("totals:") == 2


def test_play_exits_cleanly_on_eof(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _play(monkeypatch, capsys, "", "--seats", "human,random", "--seed", "0")
    assert code == 0 and out.rstrip().endswith("bye")


def _public_text_expected(action: int, phase: int) -> str:
    """What the table must read of ``action`` in ``phase``, written out per phase (the oracle of ``_public_move``)."""
    if phase == core.PLAY:
        return f"play {cards.to_str(action)}"
    if phase == core.NAME_TRUMP:
        return f"name trump {cards.SUIT_NAMES[action - core.NAME_TRUMP_BASE]}"
    if phase == core.SECOND_PASS:
        return "pass (drop out)" if action == core.PASS else "stay (pay to play on)"
    if action == core.PASS:
        return "pass"
    if phase == core.DECLARE:
        return "declare play"
    discards = bin(action - core.STAY_BASE).count("1")
    return f"play, discard {discards}" if discards else "play, stand pat"


@pytest.mark.parametrize("preset", sorted(presets))
def test_public_move_text_in_every_phase_of_every_preset(preset: str) -> None:
    """Every legal action of every phase met in random games of the preset reads as that phase's action."""
    rng = np.random.default_rng(5)
    phases_seen = set()
    for game in range(30):
        env = raw_env(rules=preset, num_players=3 + game % 3)
        env.reset(seed=game)
        state = StateView(env.state_vector, env.rules.num_players)
        secret = env.rules.declaration == "simultaneous"
        while state.to_act >= 0:
            phase = state.phase
            phases_seen.add(phase)
            hand = env.hand(env.agent_selection)
            for action in env.legal_actions():
                assert terminal_game._public_move(action, phase, False) == _public_text_expected(action, phase)
                assert describe(action, hand, phase).startswith(_public_text_expected(action, phase).split(",")[0])
                if secret and phase == core.DECLARE:
                    assert "hidden" in terminal_game._public_move(action, phase, True)
            env.step(int(rng.choice(env.legal_actions())))
    rules = presets[preset]
    expected = {core.PLAY, *((core.DECLARE, core.DRAW) if rules.declaration != "with_draw" else (core.DRAW_OR_PASS,))}
    if rules.trump_card == "named_by_dealer":
        expected.add(core.NAME_TRUMP)
    if rules.second_pass_ante is not None:
        expected.add(core.SECOND_PASS)
    assert expected <= phases_seen


@pytest.mark.parametrize("preset", sorted(presets))
def test_play_prints_each_phase_in_its_own_words(
    preset: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # "2" then "1": the second choice where there is one (stand pat, declare play, stay, diamonds), else the first
    code, out = _play(
        monkeypatch, capsys, "2\n1\n" * 40, "--seats", "human,random,random", "--seed", "3", "--rule", f"rules={preset}"
    )
    assert code == 0
    moves = [line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("player_") and "): " in line]
    assert moves
    rules = presets[preset]
    allowed = (
        "play ",
        "pass",
        "play, stand pat",
        "play, discard ",
        "declare play",
        "name trump ",
        "stay (pay",
        "pass (drop out)",
        "declares (hidden",
    )
    assert all(m.startswith(allowed) for m in moves), moves
    assert not any("discarding" in m or "standing pat" in m for m in moves)  # the old texts
    if rules.trump_card == "named_by_dealer":
        assert any(m.startswith("name trump ") for m in moves)
        assert " 1) name trump clubs" in out or any(m.startswith("name trump") for m in moves)
    if rules.declaration == "two_rounds":
        assert any(m == "declare play" for m in moves)
    if rules.declaration == "simultaneous":
        assert any(m.startswith("declares (hidden") for m in moves)
        assert "declare play" in out  # the human's own menu names the declaration


def test_invocation_names_the_package_a_trainer_runs_as(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m train.ppo`` runs ``train/ppo/__main__.py``: the run folder's commands.txt names the package."""
    from train import runs

    monkeypatch.setattr(sys, "argv", ["/repo/train/ppo/__main__.py", "--seed", "1"])
    assert runs.invocation("train.ppo") == "python -m train.ppo --seed 1"
    monkeypatch.setattr(sys, "argv", ["/repo/train/sb3/__main__.py"])
    assert runs.invocation("train.ppo") == "/repo/train/sb3/__main__.py"
    monkeypatch.setattr(sys, "argv", ["/usr/bin/bourre", "train", "--seed", "1"])
    assert runs.invocation("train.ppo") == "bourre train --seed 1"
