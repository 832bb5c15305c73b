"""The batched trainer's run folder under faults (issue 21): non-finite weights, interrupted warm starts, bad
folders and options, sizes that cannot fit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from run_helpers import bourre_train

from agents.ppo import save_policy
from train.learning import checkpoint
from train.learning.checkpoint import TrainingDivergedError
from train.learning.policy_net import PolicyNet
from train.ppo import trainer
from train.ppo.trainer import Args, parse_args, run

ROOT = Path(__file__).resolve().parent.parent
# No imitation, no evaluation during training: the smallest run that writes a checkpoint and a model.
QUICK = {
    "tables": 16,
    "rollout_decisions": 256,
    "minibatch_size": 128,
    "imitation_decisions": 0,
    "hidden": (32, 16),
    "snapshot_every": 512,
    "eval_every": 0,
    "checkpoint_every": 256,
    "final_eval_deals": 2,
    "eval_workers": 1,
    "progress": False,
}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("finished") / "run"
    run(Args(run_dir=run_dir, total_timesteps=256, seed=4, **QUICK))  # type: ignore[arg-type]
    return run_dir


def copy_run(source: Path, target: Path) -> Path:
    target.mkdir()
    for name in ("args.json", "state.json", "checkpoint.pt", "model.npz", "commands.txt"):
        (target / name).write_bytes((source / name).read_bytes())
    return target


def contents(run_dir: Path) -> dict[str, bytes]:
    return {
        name: (run_dir / name).read_bytes() for name in ("checkpoint.pt", "model.npz", "state.json", "commands.txt")
    }


def resume(run_dir: Path, total: int) -> Path:
    return run(*parse_args(["--run-dir", str(run_dir), "--resume", "--total-timesteps", str(total), "--no-progress"]))


# ---------------------------------------------------------------------------- non-finite weights
def test_a_non_finite_checkpoint_is_refused_and_the_run_folder_kept(finished_run: Path, tmp_path: Path) -> None:
    run_dir = copy_run(finished_run, tmp_path / "run")
    saved = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    saved["net"]["first_weight"][0, 0] = float("nan")
    torch.save(saved, run_dir / "checkpoint.pt")
    before = contents(run_dir)
    with pytest.raises(ValueError, match=r"checkpoint\.pt: net\.first_weight holds non-finite numbers"):
        resume(run_dir, 1024)
    assert contents(run_dir) == before  # model, checkpoint and state untouched; the refused resume not recorded


def test_the_command_line_refuses_a_non_finite_checkpoint_with_exit_2(finished_run: Path, tmp_path: Path) -> None:
    run_dir = copy_run(finished_run, tmp_path / "run")
    saved = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    saved["net"]["first_weight"].fill_(float("inf"))
    torch.save(saved, run_dir / "checkpoint.pt")
    proc = bourre_train("--run-dir", str(run_dir), "--resume", "--total-timesteps", "1024", "--no-progress")
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 2, out
    assert "checkpoint.pt" in out and "non-finite" in out and "Traceback" not in out


def test_training_that_diverges_stops_and_keeps_the_last_good_files(
    finished_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = copy_run(finished_run, tmp_path / "run")
    update = trainer.ppo_update

    def diverging_update(net: PolicyNet, *rest: Any) -> Any:
        stats = update(net, *rest)
        with torch.no_grad():
            net.first_weight.fill_(float("nan"))
        return stats

    monkeypatch.setattr(trainer, "ppo_update", diverging_update)
    lines_before = (run_dir / "commands.txt").read_text().count("\n")
    before = {name: data for name, data in contents(run_dir).items() if name != "commands.txt"}
    with pytest.raises(TrainingDivergedError, match="training diverged at step"):
        resume(run_dir, 4096)
    assert {name: data for name, data in contents(run_dir).items() if name != "commands.txt"} == before
    assert (run_dir / "commands.txt").read_text().count("\n") == lines_before + 1  # the resume was accepted


def test_save_policy_refuses_non_finite_weights_and_keeps_the_file(tmp_path: Path) -> None:
    net = PolicyNet((8,))
    path = save_policy(tmp_path / "p.npz", net.policy_weights({}))
    good = path.read_bytes()
    with torch.no_grad():
        net.first_weight[0, 0] = float("nan")
    with pytest.raises(ValueError, match=r"p\.npz: not written, layers\.0\.weight holds non-finite"):
        save_policy(path, net.policy_weights({}))
    assert path.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.npz"]  # no temporary file left behind


def test_non_finite_tensor_names_the_first_bad_tensor() -> None:
    assert checkpoint.non_finite_tensor({"a": torch.zeros(2), "b": [torch.ones(1), torch.arange(3)]}) is None
    bad = {"net": {"w": torch.zeros(2)}, "optimizer": {"state": {0: {"exp_avg": torch.tensor([1.0, np.nan])}}}}
    assert checkpoint.non_finite_tensor(bad) == "optimizer.state.0.exp_avg"


# ---------------------------------------------------------------------------- the run folder and the options
def test_a_failed_resume_is_not_recorded_in_commands(finished_run: Path, tmp_path: Path) -> None:
    run_dir = copy_run(finished_run, tmp_path / "run")
    (run_dir / "checkpoint.pt").write_bytes(b"damaged")
    before = (run_dir / "commands.txt").read_text()
    with pytest.raises(ValueError, match="checkpoint"):
        resume(run_dir, 1024)
    assert (run_dir / "commands.txt").read_text() == before


def test_program_name_of_the_help_is_bourre_train() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "train.cli", "train", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.lstrip().startswith("usage: bourre train [-h]"), out.stdout[:200]
    out = subprocess.run(
        [sys.executable, "-m", "train.cli", "train", "--trainer", "sb3", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.lstrip().startswith("usage: bourre train --trainer sb3 [-h]"), out.stdout[:200]


# ---------------------------------------------------------------------------- sizes that cannot fit
@pytest.mark.parametrize(
    ("field", "flag"),
    [
        ("tables", "--tables"),
        ("rollout_decisions", "--rollout-decisions"),
        ("imitation_decisions", "--imitation-decisions"),
    ],
)
def test_sizes_that_cannot_fit_in_memory_are_refused_by_name(field: str, flag: str) -> None:
    huge = 10**12  # terabytes of tables or decisions on any machine
    with pytest.raises(ValueError, match=rf"^{flag} {huge} needs about [\d.]+ TiB of memory"):
        Args(**{field: huge}).validate()  # type: ignore[arg-type]
    Args(tables=4096, rollout_decisions=65536).validate()  # sizes of real runs pass


def test_the_command_line_refuses_a_size_that_cannot_fit_before_any_work(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = bourre_train("--run-dir", str(run_dir), "--tables", "20000000000", "--no-progress")
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 2, out
    assert "--tables 20000000000 needs about" in out and "Traceback" not in out and "MemoryError" not in out
    assert not run_dir.exists()


# ---------------------------------------------------------------------------- stopped early, bad inputs
def test_resume_of_a_run_stopped_before_its_first_checkpoint_starts_afresh(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What Ctrl-C during the imitation warm start leaves: args.json, commands.txt, maybe a step-0 evaluation."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    args = Args(run_dir=run_dir, total_timesteps=256, seed=6, **QUICK)  # type: ignore[arg-type]
    (run_dir / "args.json").write_text(json.dumps(args.to_json()))
    (run_dir / "commands.txt").write_text("bourre train ...\n")
    (run_dir / "eval_policy.npz").write_bytes(b"left by the stopped start")
    with pytest.raises(ValueError, match="not empty.*--resume"):  # a new run is pointed at --resume
        run(Args(run_dir=run_dir, **QUICK))  # type: ignore[arg-type]
    resume(run_dir, 256)
    assert "starting its run afresh" in capsys.readouterr().out
    assert json.loads((run_dir / "state.json").read_text())["num_timesteps"] >= 256
    assert (run_dir / "model.npz").is_file() and (run_dir / "checkpoint.pt").is_file()
    assert not (run_dir / "eval_policy.npz").exists()
    assert (run_dir / "commands.txt").read_text().count("\n") == 2


def test_policy_files_are_read_before_any_work(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(b"not a policy")
    with pytest.raises(ValueError, match=r"^opponent_policy: .*damaged\.npz: not a readable \.npz policy file"):
        Args(opponent_policy=damaged).validate()
    other_widths = save_policy(tmp_path / "wide.npz", PolicyNet((64,)).policy_weights({}))
    with pytest.raises(ValueError, match=r"^init_policy: .*wide\.npz: the policy has layers \(64,\)"):
        Args(init_policy=other_widths, hidden=(32, 16)).validate()


@pytest.mark.parametrize("where", ["/proc/forbidden/run", "file"])
def test_a_run_folder_that_cannot_be_made_is_refused_before_any_work(tmp_path: Path, where: str) -> None:
    run_dir = Path(where) if where.startswith("/") else tmp_path / "a_file" / "run"
    (tmp_path / "a_file").write_text("")
    proc = bourre_train("--run-dir", str(run_dir), "--no-progress")
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 2, out
    assert f"run_dir: cannot create {run_dir}" in out and "Traceback" not in out
