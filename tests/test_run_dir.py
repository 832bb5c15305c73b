"""Run folders (``train.run_dir.claim_run_dir``): a new run needs an empty folder, ``--overwrite`` clears only the
run's own outputs, and ``bourre train`` refuses a finished run's folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from train import cli
from train.run_dir import claim_run_dir


def test_a_new_run_needs_an_empty_run_folder(tmp_path: Path) -> None:
    outputs = ("model.npz", "tb")
    claim_run_dir(tmp_path / "new" / "run", resume=False, overwrite=False, outputs=outputs)  # absent: made
    assert (tmp_path / "new" / "run").is_dir()
    (tmp_path / "new" / "run").rmdir()
    (tmp_path / "new").rmdir()
    claim_run_dir(tmp_path, resume=False, overwrite=False, outputs=outputs)  # empty: fine
    (tmp_path / "model.npz").write_text("old")
    (tmp_path / "tb").mkdir()
    (tmp_path / "tb" / "events").write_text("old")
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not empty .*--overwrite"):
        claim_run_dir(tmp_path, resume=False, overwrite=False, outputs=outputs)
    claim_run_dir(tmp_path, resume=True, overwrite=False, outputs=outputs)  # resuming needs the old files
    assert (tmp_path / "model.npz").exists()
    with pytest.raises(ValueError, match="give one"):
        claim_run_dir(tmp_path, resume=True, overwrite=True, outputs=outputs)
    claim_run_dir(tmp_path, resume=False, overwrite=True, outputs=outputs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # the run's outputs only
    with pytest.raises(ValueError, match="is a file"):
        claim_run_dir(tmp_path / "notes.txt", resume=False, overwrite=False, outputs=outputs)


def test_bourre_train_refuses_a_finished_run_without_its_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from train.sb3 import trainer as sb3_trainer

    (tmp_path / "model.npz").write_text("the earlier run's model")
    (tmp_path / "args.json").write_text("{}")
    assert cli.main(["train", "--run-dir", str(tmp_path), "--no-progress"]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert (tmp_path / "model.npz").read_text() == "the earlier run's model"
    args, given = sb3_trainer.parse_args(["--overwrite", "--seed", "1"])
    assert args.overwrite and given == {"seed"}
    assert {"model.npz", "args.json", "report.md", "checkpoint.zip", "tb"} <= set(sb3_trainer.RUN_OUTPUTS)
