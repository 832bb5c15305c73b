"""Expert iteration and sessions: ``bourre train --trainer exit --session K`` is refused in one line with its reason
(the search's values, which the network learns, are chips at the end of a deal), as is a session length that is not
one."""

from __future__ import annotations

from pathlib import Path

import pytest

from train import cli
from train.exit.args import Args


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("3", "session: expert iteration trains on single deals only, got 3: the search's values"),
        ("20", "cannot value a carried pot; bourre train --session K (or --trainer sb3|dmc) trains on sessions"),
        ("0", "session: expected a number of deals in 1..10000, got 0"),
    ],
)
def test_sessions_are_refused_in_one_line_with_the_reason(
    value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["train", "--trainer", "exit", "--run-dir", str(tmp_path / "run"), "--session", value]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and message in err, err
    assert not (tmp_path / "run").exists()  # refused before the run folder is made


def test_single_deals_are_the_default_and_accepted() -> None:
    assert Args().session == 1
    Args(session=1).validate()
