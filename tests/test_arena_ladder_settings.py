"""Every setting of ``bourre arena serve --ladder`` is checked at start and refused in one line: a clock of nan, 0,
-5 or 1e9 once started a ladder that stored two refused matches a second and never played."""

from __future__ import annotations

from pathlib import Path

import pytest

from train.cli import main


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--ladder-clock", "nan", "--ladder-clock: expected seconds in 0.001..60"),
        ("--ladder-clock", "0", "--ladder-clock: expected seconds"),
        ("--ladder-clock", "-5", "--ladder-clock: expected seconds"),
        ("--ladder-clock", "1e9", "--ladder-clock: expected seconds"),
        ("--ladder-deals", "0", "--ladder-deals: expected 1..1000"),
        ("--ladder-deals", "5000", "--ladder-deals: expected 1..1000"),
        ("--ladder-tables", "0", "--ladder-tables: expected 1..32"),
        ("--ladder-tables", "1000", "--ladder-tables: expected 1..32"),
    ],
)
def test_a_bad_ladder_setting_is_refused_in_one_line_before_the_server_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, words: str
) -> None:
    code = main(["arena", "serve", "--data", str(tmp_path / "data"), "--ladder", option, value])
    err = capsys.readouterr().err.strip()
    assert code == 2 and words in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "data").exists()  # refused before anything is made
