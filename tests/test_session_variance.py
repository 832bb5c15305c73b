"""``python -m train.research.session_variance``: the spread of session results against length and pot limit."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from train.eval.duplicate import evaluate
from train.research import session_variance


def test_each_cell_is_the_evaluation_of_its_sessions(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "spread.json"
    argv = [
        "--candidate",
        "heuristic",
        "--field",
        "random",
        "--players",
        "3",
        "--lengths",
        "1",
        "4",
        "--pot-limits",
        "none",
        "6",
        "--deals",
        "12",
        "--workers",
        "1",
        "--no-progress",
        "--json",
        str(out),
    ]
    assert session_variance.main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("| players | pot limit | deals a session | sessions |")
    cells = json.loads(out.read_text())["cells"]
    assert [(c["pot_limit"], c["length"], c["sessions"]) for c in cells] == [
        (None, 1, 12),
        (None, 4, 3),
        (6, 1, 12),
        (6, 4, 3),
    ]
    report = evaluate("heuristic", "random", 3, 3, 0, progress=False, session=4, rule_options={"pot_limit": 6})
    table = report.table(3)
    assert cells[3]["replacement_advantage"] == table.replacement_advantage
    assert cells[3]["pot_left"] == table.pot_left and math.isnan(cells[0]["pot_left"])
    # the spread per deal is the sessions' standard deviation times the square root of their length
    assert cells[3]["spread_per_deal"] > 0


def test_bad_arguments_are_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in (["--lengths", "0"], ["--players", "9"], ["--pot-limits", "0"]):
        with pytest.raises(SystemExit) as refused:
            session_variance.main(bad)
        assert refused.value.code == 2
    assert (
        session_variance.main(
            [
                "--candidate",
                "nobody",
                "--deals",
                "2",
                "--lengths",
                "2",
                "--players",
                "3",
                "--pot-limits",
                "none",
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 2
    )
    assert "session_variance: error: unknown agent 'nobody'" in capsys.readouterr().err
