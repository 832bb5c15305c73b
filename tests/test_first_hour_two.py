"""Issue 49's "what a person sees" points: bench's usage, the terminal game's words, train's progress lines, the
documented example outputs, the test suite's duration report and the README's torch install."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
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


def test_a_compile_notice_starts_its_own_line_below_a_progress_bar() -> None:
    code = """
import logging, sys, time
from tqdm.auto import tqdm
import bourre_env
from numba import njit

handler = logging.StreamHandler()  # as the bourre command shows them
handler.setFormatter(logging.Formatter("%(message)s"))
logging.getLogger("bourre_env").addHandler(handler)
logging.getLogger("bourre_env").setLevel(logging.INFO)
with tqdm(total=4, desc="record heuristic", file=sys.stderr, mininterval=0) as bar:
    bar.update(1)
    f = njit(lambda x: x * 3)  # compiled on its first call: the notice comes while the bar is on the screen
    assert f(2) == 6
    time.sleep(2)  # past the end of the burst: the "compiled" line too
    bar.update(3)
"""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    err = result.stderr
    notices = [i for i, _ in enumerate(err) if err.startswith(("compiling ", "compiled "), i)]
    assert len(notices) == 2, err
    for i in notices:
        assert i == 0 or err[i - 1] in "\r\n", repr(err[max(0, i - 80) : i + 20])  # not after the bar's text
    assert "record heuristic: 100%" in err.splitlines()[-1]  # the bar redrawn below, and finished


def test_the_imitation_bar_counts_the_decisions_asked_for_epoch_by_epoch(capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    from train.learning.policy_net import PolicyNet
    from train.ppo.args import Args
    from train.ppo.warm_start import imitation_warm_start

    args = Args(tables=16, imitation_decisions=600, imitation_epochs=3, hidden=(32, 16), progress=True)
    stats = imitation_warm_start(PolicyNet(args.hidden), args, torch.device("cpu"))
    err = capsys.readouterr().err
    assert stats["decisions"] == 600
    assert "600/600" in err and "1800" not in err  # not epochs x decisions
    assert "imitate, epoch 1/3" in err and "imitate, epoch 3/3: 100%" in err


def test_the_imitation_summary_is_one_readable_line() -> None:
    from train.learning.imitation import summary

    stats = {
        "policy_loss": 1.0241,
        "value_loss": 0.0372,
        "accuracy": 0.6681,
        "decisions": 300000.0,
        "compile_seconds": 76.9,
        "seconds": 5.98,
    }
    assert summary(stats) == (
        "imitation warm start: 300,000 decisions, accuracy 0.668, policy loss 1.024, value loss 0.037, "
        "6 s (and 77 s of numba compiling)"
    )
    assert summary({"accuracy": 0.5, "policy_loss": 1.0, "value_loss": 0.1}) == (
        "imitation warm start: accuracy 0.500, policy loss 1.000, value loss 0.100"
    )


def test_pytest_names_the_slowest_tests_and_the_readme_says_so() -> None:
    pytest_options = (ROOT / "pyproject.toml").read_text().split("[tool.pytest.ini_options]", 1)[1].split("\n[", 1)[0]
    addopts = next(line for line in pytest_options.splitlines() if line.startswith("addopts = "))
    assert "--durations=15" in shlex.split(shlex.split(addopts.removeprefix("addopts = "))[0])
    tests_section = (ROOT / "README.md").read_text().split("## Tests", 1)[1].split("\n## ", 1)[0]
    assert "15 slowest tests" in " ".join(tests_section.split()) and "--durations=15" in tests_section


def test_the_readme_says_which_torch_build_a_stock_pip_gets_and_how_to_get_the_cpu_one() -> None:
    readme = (ROOT / "README.md").read_text()
    install = [line for line in readme.splitlines() if line.startswith("pip install torch==2.13.0")]
    assert len(install) == 1 and "CUDA build" in install[0]
    assert "--index-url https://download.pytorch.org/whl/cpu" in install[0]
    assert "the CPU build, so the extras pull no CUDA" not in readme  # what a stock pip on Linux does not do
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install -q torch==2.13.0\n" in ci and "index-url" not in ci  # CI's install stays as it was


EVALUATION_TIME_LINE = re.compile(r"^\d+\.\d s with \d+ worker\(s\); wrote runs/eval/eval\.json$")


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
    assert "-k evaluation_example" in intro and "tests/test_first_hour_two.py" in intro
    assert "defaults" in intro and "one per CPU" in intro
    assert EVALUATION_TIME_LINE.match(shown[-1]), shown[-1]
    assert "1 worker(s)" not in shown[-1]  # written on a 2-CPU machine, whose default is 2 workers


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
