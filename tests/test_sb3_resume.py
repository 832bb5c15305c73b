"""Resuming an sb3 run (``train.sb3.trainer``): the checkpoint holds only tensors of the run's own network, and
a bad ``args.json`` or ``state.json`` is named with the field that is wrong."""

from __future__ import annotations

import io
import json
import pathlib
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from train import cli

TINY = {
    "num_envs": 1,
    "n_steps": 64,
    "batch_size": 64,
    "n_epochs": 1,
    "hidden": [8],
    "imitation_decisions": 0,
    "eval_every": 0,
    "total_timesteps": 128,
    "final_eval_deals": 2,
    "eval_workers": 1,
    "progress": False,
}


def _run_folder(tmp_path: Path, checkpoint: bytes | None = None, **changes: Any) -> Path:
    from train.sb3.trainer import Args, RunState

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    args = {**Args(run_dir=run_dir).to_json(), **TINY, **changes}
    (run_dir / "args.json").write_text(json.dumps(args))
    RunState(num_timesteps=64).save(run_dir / "state.json")
    (run_dir / "checkpoint.zip").write_bytes(checkpoint or b"")
    return run_dir


def _checkpoint_holding(obj: Any, tmp_path: Path) -> bytes:
    import torch

    buffer = io.BytesIO()
    torch.save({"weights": obj}, buffer)
    path = tmp_path / "forged.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("policy.pth", buffer.getvalue())
    return path.read_bytes()


def test_resume_refuses_a_checkpoint_holding_objects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _run_folder(tmp_path, _checkpoint_holding(pathlib.PurePosixPath("x"), tmp_path))
    assert cli.main(["train", "--run-dir", str(run_dir), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "checkpoint.zip: holds objects other than tensors" in err
    assert "weights_only" not in err and "Traceback" not in err


def test_resume_refuses_a_checkpoint_of_another_network(tmp_path: Path) -> None:
    from train.sb3.trainer import Args, build_model, make_vec_env, run

    run_dir = _run_folder(tmp_path)
    args = Args.from_json({**json.loads((run_dir / "args.json").read_text()), "hidden": [16]})
    env = make_vec_env(args)
    build_model(args, env, tmp_path / "other").save(run_dir / "checkpoint.zip")
    env.close()
    with pytest.raises(ValueError, match="checkpoint.zip: does not fit the network of args.json"):
        run(Args(run_dir=run_dir, resume=True), set())


def test_resume_keeps_the_network_of_the_run(tmp_path: Path) -> None:
    from train.sb3.trainer import Args, resolve_resume

    run_dir = _run_folder(tmp_path)
    with pytest.raises(ValueError, match="--hidden 32 32: the run in .* has hidden layers 8"):
        resolve_resume(Args(run_dir=run_dir, resume=True, hidden=(32, 32)), {"hidden"})
    assert resolve_resume(Args(run_dir=run_dir, resume=True), set()).hidden == (8,)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"seed": "zero"}', "seed is 'zero', expected int"),
        ('{"hidden": 5}', "hidden is 5"),
        ('{"learning_rate": true}', "learning_rate is True"),
        ('{"run_dir": 3}', "run_dir is 3"),
        ('{"total_timesteps": 0}', "total_timesteps: expected at least 1"),
        ('{"layers": 3}', "unknown field(s) ['layers']"),
        ("[1, 2]", "expected a JSON object"),
        ("{not json", "cannot read the run's arguments"),
    ],
)
def test_bad_args_json_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str) -> None:
    run_dir = _run_folder(tmp_path)
    (run_dir / "args.json").write_text(text)
    assert cli.main(["train", "--run-dir", str(run_dir), "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"{run_dir / 'args.json'}: " in err and message in err, err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"num_timesteps": "64"}', "num_timesteps is '64'"),
        ('{"snapshots": "a.npz"}', "snapshots is 'a.npz'"),
        ('{"evals": [1]}', "evals is [1]"),
        ('{"imitation": {"accuracy": "high"}}', "imitation is"),
        ('{"steps": 1}', "unknown field"),
        ("", "cannot read the run state"),
    ],
)
def test_bad_state_json_is_named(tmp_path: Path, text: str, message: str) -> None:
    from train.sb3.trainer import Args, run

    run_dir = _run_folder(tmp_path)
    (run_dir / "state.json").write_text(text)
    with pytest.raises(ValueError, match=f"state.json: .*{re.escape(message)}"):
        run(Args(run_dir=run_dir, resume=True), set())
