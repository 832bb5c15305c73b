"""A run folder's JSON files read back (``state.json``, ``args.json``): a bad one names the file and the field in
one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from train import cli
from train.runs import RunState


def test_a_run_state_with_negative_counters_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"num_timesteps": -5}))
    with pytest.raises(ValueError, match=rf"{path}: num_timesteps is -5, expected an integer >= 0"):
        RunState.load(path)
    path.write_text(json.dumps({"train_seconds": -1.0}))
    with pytest.raises(ValueError, match=rf"{path}: train_seconds is -1.0"):
        RunState.load(path)


def test_a_deeply_nested_args_json_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "args.json").write_text('{"seed": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert cli.main(["train", "--run-dir", str(run_dir), "--resume", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "nested too deep" in err and "Traceback" not in err
