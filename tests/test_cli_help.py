"""``bourre train --help`` in groups (train.grouped_cli): every field of the trainer's ``Args`` in one box, the
short run's flags first, and the grouped command line parsing exactly as the flat one did."""

from __future__ import annotations

import dataclasses
import io
import re
from contextlib import redirect_stdout

import pytest
import tyro

from train.grouped_cli import field_docstrings, grouped_cli, grouped_fields
from train.ppo.args import HELP_GROUPS, Args
from train.ppo.trainer import parse_args


def test_every_field_of_the_main_job_is_in_one_group() -> None:
    grouped = grouped_fields(Args, HELP_GROUPS)
    assert sorted(name for _, members in grouped for name in members) == sorted(
        f.name for f in dataclasses.fields(Args)
    )
    assert grouped[0][0] == "run"


def test_groups_that_miss_or_repeat_a_field_are_refused() -> None:
    first, *rest = HELP_GROUPS
    with pytest.raises(ValueError, match=r"in no group \['seed'\]"):
        grouped_fields(Args, [(first[0], first[1][1:]), *rest])
    with pytest.raises(ValueError, match=r"listed twice \['seed'\]"):
        grouped_fields(Args, [*HELP_GROUPS, ("again", ("seed",))])
    with pytest.raises(ValueError, match=r"unknown \['no_such_flag'\]"):
        grouped_fields(Args, [*HELP_GROUPS, ("more", ("no_such_flag",))])


def _help() -> str:
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit) as stop:
        parse_args(["--help"])
    assert stop.value.code == 0
    return out.getvalue()


def test_help_shows_one_titled_box_per_group_in_order() -> None:
    text = _help()
    # a title line: "╭─ run options ───╮" on a terminal, " run options" over a dashed rule elsewhere
    titles = re.findall(r"^\W*?(?:(\w+) )?options\b", text, flags=re.MULTILINE)
    assert titles == [""] + [title for title, _ in HELP_GROUPS]
    run_box = text[text.index(" run options") : text.index(" machine options")]
    for name in HELP_GROUPS[0][1]:
        assert f"--{name.replace('_', '-')}" in run_box
    assert "--learning-rate" not in run_box and "--trainer sb3" in text
    # the docstring of a field (and its default) reaches its flag
    assert "PPO learner decisions to train for" in run_box and "(default: 3000000)" in run_box


@pytest.mark.parametrize(
    ("argv", "given"),
    [
        ([], set()),
        (
            ["--seed", "3", "--players", "5", "7", "--no-progress", "--hidden", "64", "32"],
            {"seed", "players", "progress", "hidden"},
        ),
        (
            ["--run-dir", "runs/x", "--target-kl", "None", "--opponent-policy", "p.npz", "--ent-coef", "0.01"],
            {"target_kl", "opponent_policy", "ent_coef"},
        ),
        (
            ["--eval-players", "3", "5", "--imitation-players", "--no-anneal-lr", "--workers", "2"],
            {"eval_players", "imitation_players", "anneal_lr", "workers"},
        ),
    ],
)
def test_the_grouped_command_line_reads_as_the_flat_one(argv: list[str], given: set[str]) -> None:
    grouped, named = parse_args(argv)
    assert grouped == tyro.cli(Args, args=argv)
    assert named == given


def test_a_bad_value_is_the_usual_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        parse_args(["--seed", "three"])
    assert stop.value.code == 2
    assert "--seed" in capsys.readouterr().err


def test_field_docstrings_reads_the_string_under_each_field() -> None:
    @dataclasses.dataclass
    class Small:
        a: int = 1
        """the first"""
        b: int = 2
        c: str = "x"
        """the third,
        on two lines"""

    assert field_docstrings(Small) == {"a": "the first", "c": "the third,\non two lines"}
    parsed = grouped_cli(Small, [("one", ["a", "c"]), ("two", ["b"])], args=["--b", "5"], prog="p", description="d")
    assert parsed == Small(b=5)
