"""The training script: a tiny run end to end, resume after Ctrl-C, argument checks, the CLI entry points."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from run_helpers import bourre_train, tensorboard_tags

from agents.ppo import load_policy
from train.sb3.trainer import Args, parse_args, resolve_resume

TINY = [
    "--num-envs",
    "2",
    "--n-steps",
    "64",
    "--batch-size",
    "64",
    "--n-epochs",
    "1",
    "--hidden",
    "32",
    "32",
    "--imitation-decisions",
    "1500",
    "--imitation-epochs",
    "1",
    "--snapshot-every",
    "128",
    "--eval-every",
    "256",
    "--eval-deals",
    "4",
    "--checkpoint-every",
    "128",
    "--final-eval-deals",
    "4",
    "--eval-workers",
    "1",
    "--torch-threads",
    "1",
    "--no-progress",
]
ROOT = Path(__file__).resolve().parent.parent


def train(*argv: str, **kwargs: object) -> subprocess.Popen:
    return bourre_train("--trainer", "sb3", *argv, **kwargs)


def test_tiny_run_end_to_end(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = train("--run-dir", str(run_dir), "--total-timesteps", "512", "--seed", "3", *TINY)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    state = json.loads((run_dir / "state.json").read_text())
    assert state["num_timesteps"] == 512
    assert state["imitation"]["accuracy"] > 0
    assert [row["step"] for row in state["evals"]] == [256, 512]
    assert all(isinstance(row["replacement_advantage_5p"], float) for row in state["evals"])
    assert len(state["snapshots"]) == 4 and all(Path(p).is_file() for p in state["snapshots"])
    load_policy(run_dir / "model.npz")  # the exported policy is a valid file
    report = (run_dir / "report.md").read_text()
    assert "| random | 5 | 4 |" in report and "| heuristic | 5 | 4 |" in report
    assert "--seed 3" in report  # the exact command
    assert "| table advantage (chips/deal) [95% CI] | replacement advantage [95% CI] |" in report
    assert (run_dir / "learning_curve.png").stat().st_size > 0
    assert "| heuristic | 5 | 4 |" in out  # the evaluation table is printed
    tags = tensorboard_tags(run_dir / "tb")
    assert {
        "charts/ep_rew_mean",
        "charts/fps",
        "losses/value_loss",
        "losses/entropy_loss",
        "eval/advantage_vs_heuristic_5p",
        "eval/replacement_advantage_vs_heuristic_5p",
    } <= tags
    assert json.loads((run_dir / "args.json").read_text())["seed"] == 3


def test_ctrl_c_saves_and_resume_continues_the_step_count(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = train("--run-dir", str(run_dir), "--total-timesteps", "1000000", *TINY, start_new_session=True)
    state_file = run_dir / "state.json"
    deadline = time.monotonic() + 600
    while not state_file.exists():  # the first checkpoint: training is under way
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, "no checkpoint within the time limit"
        time.sleep(0.2)
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground process group
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 130, out
    assert "checkpoint saved" in out and "--resume" in out
    saved = json.loads(state_file.read_text())["num_timesteps"]
    assert saved >= 128
    interrupted = load_policy(run_dir / "model.npz").meta  # the policy so far, usable before the run ends
    assert interrupted["interrupted"] is True and interrupted["num_timesteps"] == saved
    assert "the policy so far" in out and f"ppo:{run_dir / 'model.npz'}" in out

    target = saved + 256
    proc = train("--run-dir", str(run_dir), "--resume", "--total-timesteps", str(target), "--no-progress")
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    assert f"resuming {run_dir} at step {saved:,}" in out
    final = json.loads(state_file.read_text())["num_timesteps"]
    assert target <= final < target + 128  # went on from the saved count, by whole rollouts
    assert json.loads((run_dir / "args.json").read_text())["total_timesteps"] == 1_000_000  # saved args kept
    assert (run_dir / "model.npz").is_file()


def test_resume_needs_a_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no checkpoint.zip"):
        resolve_resume(Args(run_dir=tmp_path, resume=True), set())
    with pytest.raises(ValueError, match="--run-dir"):
        resolve_resume(Args(resume=True), set())


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("total_timesteps", 0, "total_timesteps"),
        ("players", (9,), "players"),
        ("hidden", (), "hidden"),
        ("pool_random", -1.0, "pool weights"),
        ("gamma", 0.0, "gamma"),
        ("imitation_players", (1,), "imitation_players"),
    ],
)
def test_bad_arguments_are_named(field: str, value: object, message: str) -> None:
    args = Args(**{field: value})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        args.validate()


def test_command_line_arguments_and_given_fields() -> None:
    args, given = parse_args(["--seed", "4", "--players", "5", "7", "--no-progress", "--run-dir", "x"])
    assert args.seed == 4 and args.players == (5, 7) and args.progress is False and args.run_dir == Path("x")
    assert given == {"seed", "players", "progress"}


def test_cli_help_lists_train_and_bench() -> None:
    out = subprocess.run([sys.executable, "-m", "train.cli", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "train" in out.stdout and "bench" in out.stdout
    out = subprocess.run(
        [sys.executable, "-m", "train.cli", "train", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0 and "--total-timesteps" in out.stdout and "--resume" in out.stdout
    out = subprocess.run(
        [sys.executable, "-m", "train.cli", "bench", "nonsense"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 2 and "usage: bourre bench" in out.stderr
    from train.bench import BENCHMARKS

    assert all((ROOT / "benchmarks" / script).is_file() for script in BENCHMARKS.values())


def test_sb3_checkpoints_with_non_finite_weights_are_neither_written_nor_read(tmp_path: Path) -> None:
    from train.runs import RunState
    from train.sb3.glue import load_checkpoint, save_checkpoint
    from train.sb3.trainer import build_model, make_vec_env

    args = Args(num_envs=1, n_steps=64, batch_size=64, hidden=(32, 32), imitation_decisions=0, progress=False)
    env = make_vec_env(args)
    try:
        model = build_model(args, env, tmp_path)
        save_checkpoint(model, tmp_path, RunState(), 0.0)
        good = (tmp_path / "checkpoint.zip").read_bytes()
        with torch.no_grad():
            next(model.policy.parameters()).fill_(float("nan"))
        with pytest.raises(ValueError, match="training diverged at step 0"):
            save_checkpoint(model, tmp_path, RunState(), 0.0)
        assert (tmp_path / "checkpoint.zip").read_bytes() == good
        model.save(tmp_path / "nan.zip")
        with pytest.raises(ValueError, match=r"nan\.zip: .* holds non-finite numbers"):
            load_checkpoint(build_model(args, env, tmp_path), tmp_path / "nan.zip", "cpu")
    finally:
        env.close()


def test_resume_of_a_run_stopped_before_its_first_checkpoint_starts_afresh(tmp_path: Path) -> None:
    """What Ctrl-C during the imitation warm start leaves: args.json and commands.txt only. ``bourre train --resume``
    without --trainer points at the sb3 trainer; with it, the run starts afresh from its arguments."""
    run_dir = tmp_path / "run"
    args, _ = parse_args(["--run-dir", str(run_dir), "--total-timesteps", "128", "--num-envs", "1", *TINY[2:]])
    run_dir.mkdir()
    (run_dir / "args.json").write_text(json.dumps(args.to_json()))
    (run_dir / "commands.txt").write_text("bourre train --trainer sb3 ...\n")
    proc = bourre_train("--run-dir", str(run_dir), "--resume")
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "--trainer sb3" in out, out
    proc = train("--run-dir", str(run_dir), "--resume", "--eval-every", "0")
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    assert "starting its run afresh" in out
    assert json.loads((run_dir / "state.json").read_text())["num_timesteps"] >= 128
    assert (run_dir / "model.npz").is_file()
    assert (run_dir / "commands.txt").read_text().count("\n") == 2
