"""Rollout workers of the batched trainer (``bourre train --workers N``, ``train.ppo.workers``)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from train.eval import jobs as eval_jobs
from train.eval.duplicate import evaluate
from train.learning.policy_net import PolicyNet
from train.ppo import trainer
from train.ppo.rollout import Collector, SeatPool, gae
from train.ppo.trainer import Args, Training, passing_warning, run
from train.ppo.workers import (
    ProcessWorkers,
    RayWorkers,
    ReceivedBatch,
    WorkerConfig,
    WorkerError,
    auto_workers,
    network_weights,
    table_shares,
)
from train.runs import RunState

ROOT = Path(__file__).resolve().parent.parent
TINY = {
    "tables": 16,
    "rollout_decisions": 256,
    "minibatch_size": 128,
    "imitation_decisions": 0,
    "hidden": (32, 16),
    "snapshot_every": 512,
    "eval_every": 0,
    "checkpoint_every": 512,
    "final_eval_deals": 2,
    "eval_workers": 1,
    "progress": False,
}
TINY_FLAGS = [
    "--tables",
    "16",
    "--rollout-decisions",
    "256",
    "--minibatch-size",
    "128",
    "--imitation-decisions",
    "0",
    "--hidden",
    "32",
    "16",
    "--snapshot-every",
    "512",
    "--eval-every",
    "0",
    "--checkpoint-every",
    "512",
    "--final-eval-deals",
    "2",
    "--eval-workers",
    "1",
    "--no-progress",
]


def config(seed: int = 7, tables: int = 12, players: tuple[int, ...] = (5, 3)) -> WorkerConfig:
    return WorkerConfig(
        index=0,
        hidden=(32, 16),
        privileged_critic=False,
        players=players,
        tables=tables,
        pool=SeatPool(),
        seed=seed,
        reward_scale=0.1,
    )


def test_two_workers_train_a_tiny_run_to_its_budget(tmp_path: Path) -> None:
    run_dir = run(Args(run_dir=tmp_path / "run", total_timesteps=700, seed=2, workers="2", **TINY))  # type: ignore[arg-type]
    state = json.loads((run_dir / "state.json").read_text())
    # the last rollout asks for what is left: each worker overshoots by less than one step of its tables
    assert 700 <= state["num_timesteps"] < 700 + TINY["tables"] + 2  # type: ignore[operator]
    assert len(state["snapshots"]) == 1 and (run_dir / "model.npz").is_file()
    assert (run_dir / "report.md").is_file()


def test_one_worker_is_the_in_process_trainer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_workers(*args: object) -> None:
        raise AssertionError("--workers 1 started rollout workers")

    monkeypatch.setattr(trainer, "start_workers", no_workers)
    models = []
    for name in ("a", "b"):
        run_dir = run(Args(run_dir=tmp_path / name, total_timesteps=600, seed=5, workers="1", **TINY))  # type: ignore[arg-type]
        assert 600 <= json.loads((run_dir / "state.json").read_text())["num_timesteps"] < 600 + 16
        models.append(dict(np.load(run_dir / "model.npz")))
    assert models[0].keys() == models[1].keys()
    for key, value in models[0].items():  # reproducible from its seed
        if value.dtype != object:
            np.testing.assert_array_equal(value, models[1][key])
    args = Args(run_dir=tmp_path / "c", workers="1", **TINY)  # type: ignore[arg-type]
    net = PolicyNet(args.hidden)
    training = Training(
        args, tmp_path / "c", net, torch.optim.Adam(net.parameters()), RunState(), {}, torch.device("cpu")
    )
    assert training.collector is not None and training.workers == 1
    training.writer.close()


def finished_part(collector: Collector) -> dict[str, np.ndarray]:
    """The decisions of finished deals as the one-process trainer would use them (``next`` renumbered)."""
    t = collector.transitions
    _, _, complete = gae(t.next[: t.n], t.done[: t.n], t.rewards[: t.n], np.zeros(t.n, np.float32), 1.0, 1.0)
    rows = np.flatnonzero(complete)
    new_index = np.cumsum(complete) - 1
    nxt = t.next[rows]
    dense = np.zeros((len(rows), t.obs.num_features), np.float32)
    for k, i in enumerate(rows):
        dense[k, t.idx[t.ptr[i] : t.ptr[i + 1]]] = t.val[t.ptr[i] : t.ptr[i + 1]]
    part = {
        "obs": dense,
        "masks": t.masks[rows].copy(),
        "actions": t.actions[rows].copy(),
        "logp": t.logp[rows].copy(),
        "values": t.values[rows].copy(),
        "rewards": t.rewards[rows].copy(),
        "done": t.done[rows].copy(),
        "next": np.where(nxt >= 0, new_index[np.maximum(nxt, 0)], -1),
    }
    collector.carry_over(complete)
    return part


def test_a_worker_sends_the_trajectories_the_one_process_collector_builds(tmp_path: Path) -> None:
    cfg = config()
    torch.manual_seed(0)
    net = PolicyNet(cfg.hidden)
    collector = Collector(net, cfg.players, cfg.tables, cfg.pool, seed=cfg.seed, reward_scale=cfg.reward_scale)
    with ProcessWorkers([cfg]) as workers:  # a spawned worker, through its pipe
        for _ in range(2):  # the second rollout carries over the deals the first left under way
            workers.start(network_weights(net), [], [300])
            received = workers.receive(lambda: False)
            assert received is not None
            collector.refresh_stale_values()
            steps = collector.collect(300)
            expected = finished_part(collector)
            assert received[0].steps == steps
            batch = ReceivedBatch(received, hidden_hands=False)
            t = batch.transitions
            assert t.n == len(expected["actions"]) > 0
            dense = np.zeros((t.n, t.obs.num_features), np.float32)
            for i in range(t.n):
                dense[i, t.idx[t.ptr[i] : t.ptr[i + 1]]] = t.val[t.ptr[i] : t.ptr[i + 1]]
            np.testing.assert_array_equal(dense, expected["obs"])
            for name in ("masks", "actions", "logp", "values", "rewards", "done", "next"):
                np.testing.assert_array_equal(getattr(t, name)[: t.n], expected[name], err_msg=name)
            assert batch.complete(1.0, 0.95)[2].all()
            with torch.no_grad():  # the next rollout's weights: the worker must use the new ones
                for p in net.parameters():
                    p.mul_(0.5)


def test_a_worker_that_raises_is_reported_with_its_error() -> None:
    with ProcessWorkers([config(players=(9,))]) as workers, pytest.raises(WorkerError) as caught:
        workers.start({}, [], [10])
        workers.receive(lambda: False)
    assert str(caught.value).startswith("rollout worker 0 failed: ValueError:") and "\n" not in str(caught.value)


def test_jobs_run_on_the_workers_between_rollouts_and_leave_the_rollout_as_it_was() -> None:
    net = PolicyNet((32, 16))
    configs = [dataclasses.replace(config(seed=s, tables=6), index=i) for i, s in enumerate((3, 4))]
    rollouts = []
    for with_jobs in (False, True):
        with ProcessWorkers(configs) as workers:
            workers.start(network_weights(net), [], [40, 40])
            if with_jobs:  # sent while the rollout is in flight: each worker takes them after it
                finished: list[int] = []
                assert workers.run_jobs(abs, [-1, 2, -3, 4, -5], finished.append) == [1, 2, 3, 4, 5]
                assert sorted(finished) == [0, 1, 2, 3, 4]
            received = workers.receive(lambda: False)
            assert received is not None and len(received) == 2
            rollouts.append(received)
    for alone, beside_jobs in zip(*rollouts, strict=True):
        np.testing.assert_array_equal(alone.actions, beside_jobs.actions)
        np.testing.assert_array_equal(alone.rewards, beside_jobs.rewards)


def test_an_evaluation_on_the_workers_is_the_evaluation_anywhere() -> None:
    alone = evaluate("heuristic", "random", players=(3, 4), deals=50, seed=4, progress=False)
    with ProcessWorkers([dataclasses.replace(config(), index=i) for i in range(2)]) as workers:
        on_workers = evaluate("heuristic", "random", players=(3, 4), deals=50, seed=4, progress=False, runner=workers)
    assert on_workers.to_dict() == alone.to_dict()
    with pytest.raises(ValueError, match="runner"):
        evaluate("heuristic", "random", deals=5, backend="ray", runner=workers)


def test_a_job_that_raises_stops_its_worker_with_its_error() -> None:
    with ProcessWorkers([config()]) as workers, pytest.raises(WorkerError) as caught:
        workers.run_jobs(int, ["seven"], lambda i: None)
    assert str(caught.value).startswith("rollout worker 0 failed: ValueError: invalid literal")


def test_the_trainer_evaluates_on_its_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_pool(*args: object) -> None:
        raise AssertionError("an evaluation during training started a process pool of its own")

    monkeypatch.setattr(eval_jobs, "_run_in_pool", no_pool)
    fields = {**TINY, "eval_every": 512, "eval_deals": 45}
    run_dir = run(Args(run_dir=tmp_path / "run", total_timesteps=600, seed=2, workers="2", **fields))  # type: ignore[arg-type]
    evals = json.loads((run_dir / "state.json").read_text())["evals"]
    assert [row["step"] // 512 for row in evals] == [0, 1]


def test_a_worker_killed_mid_run_stops_the_run_with_a_checkpoint(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "train.cli", "train", "--run-dir", str(run_dir), "--workers", "2"]
        + ["--total-timesteps", "100000000", *TINY_FLAGS],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 300
    while not (run_dir / "state.json").exists():  # the first checkpoint: the workers are playing
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, "no checkpoint within the time limit"
        time.sleep(0.2)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    workers = [pid for pid in children if "resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_text()]
    assert len(workers) == 2, children
    os.kill(int(workers[-1]), signal.SIGKILL)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 1, out
    last = out.strip().splitlines()[-1]
    assert last.startswith("train: error: rollout worker") and "died (killed by signal 9)" in last, out
    assert "checkpoint saved at step" in last and "--resume" in last
    saved = json.loads((run_dir / "state.json").read_text())["num_timesteps"]
    assert saved >= 512 and (run_dir / "checkpoint.pt").is_file()


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (pip install bourre-rl[ray])")
def test_ray_backend_trains_on_a_local_instance(tmp_path: Path) -> None:
    run_dir = run(
        Args(run_dir=tmp_path / "run", total_timesteps=600, seed=3, workers="2", backend="ray", **TINY)  # type: ignore[arg-type]
    )
    assert json.loads((run_dir / "state.json").read_text())["num_timesteps"] >= 600
    assert (run_dir / "model.npz").is_file()


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (pip install bourre-rl[ray])")
def test_an_evaluation_on_ray_workers_is_the_evaluation_anywhere() -> None:
    alone = evaluate("heuristic", "random", players=(3,), deals=45, seed=4, progress=False)
    workers = RayWorkers([dataclasses.replace(config(), index=i) for i in range(2)], None)
    try:
        workers.start(network_weights(PolicyNet((32, 16))), [], [30, 30])  # the jobs wait for the rollout
        on_workers = evaluate("heuristic", "random", players=(3,), deals=45, seed=4, progress=False, runner=workers)
        assert workers.receive(lambda: False) is not None
        with pytest.raises(WorkerError, match="rollout worker 1 \\(Ray actor\\) failed: ValueError"):
            workers.run_jobs(int, ["1", "seven"], lambda i: None)
    finally:
        workers.close()
    assert on_workers.to_dict() == alone.to_dict()


def test_an_unreachable_ray_cluster_is_refused_before_any_work(tmp_path: Path) -> None:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed (pip install bourre-rl[ray])")
    started = time.monotonic()
    with pytest.raises(ValueError, match="127.0.0.1:9"):
        run(Args(run_dir=tmp_path / "run", workers="2", backend="ray", address="127.0.0.1:9", **TINY))  # type: ignore[arg-type]
    assert not (tmp_path / "run").exists() and time.monotonic() - started < 120


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"workers": "two"}, "workers: auto or a positive count"),
        ({"workers": "0"}, "workers: auto or a positive count"),
        ({"workers": "3", "tables": 4, "players": (3, 5)}, "workers: 3 workers need at least 6 tables"),
        ({"backend": "spark"}, "backend: local or ray"),
        ({"address": "auto"}, "address: the Ray cluster of --backend ray"),
    ],
)
def test_bad_worker_arguments_are_named(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Args(**fields).validate()  # type: ignore[arg-type]


def test_worker_counts_and_table_shares() -> None:
    assert [auto_workers(c) for c in (1, 2, 3, 4, 16)] == [1, 1, 2, 2, 2]
    assert [auto_workers(c, gpu_learner=True) for c in (2, 4, 16)] == [1, 3, 8]
    assert table_shares(10, 3) == [4, 3, 3] and sum(table_shares(1024, 7)) == 1024
    assert Args(tables=1, workers="auto").worker_count() == 1  # too few tables to share: this process
    assert (
        "auto"
        in subprocess.run(
            [sys.executable, "-m", "train.cli", "train", "--help"], cwd=ROOT, capture_output=True, text=True
        ).stdout
    )


def test_a_policy_that_nearly_always_passes_is_flagged() -> None:
    def report(rate: float) -> SimpleNamespace:
        return SimpleNamespace(tables=[SimpleNamespace(players=5, candidate=SimpleNamespace(play_rate=rate))])

    assert passing_warning([report(0.5), report(0.35)]) is None  # type: ignore[list-item]
    warning = passing_warning([report(0.5), report(0.02)])  # type: ignore[list-item]
    assert warning is not None and "2.0% of its deals at 5 players" in warning


@pytest.mark.slow
def test_a_two_worker_run_is_reproducible_from_its_seed(tmp_path: Path) -> None:
    models = []
    for name in ("a", "b"):
        fields = {**TINY, "eval_every": 512, "eval_deals": 4}
        run_dir = run(Args(run_dir=tmp_path / name, total_timesteps=800, seed=9, workers="2", **fields))  # type: ignore[arg-type]
        models.append(dict(np.load(run_dir / "model.npz")))
        evals = json.loads((run_dir / "state.json").read_text())["evals"]
        assert [row["step"] // 512 for row in evals] == [0, 1]
    for key, value in models[0].items():
        if value.dtype != object:
            np.testing.assert_array_equal(value, models[1][key], err_msg=key)


@pytest.mark.slow
def test_ctrl_c_stops_the_workers_and_saves(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "train.cli", "train", "--run-dir", str(run_dir), "--workers", "2"]
        + ["--total-timesteps", "100000000", *TINY_FLAGS],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while not (run_dir / "state.json").exists():
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, "no checkpoint within the time limit"
        time.sleep(0.2)
    children = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
    workers = [pid for pid in children if "resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_text()]
    assert len(workers) == 2, children
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground process group, workers too
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 130, out
    assert "checkpoint saved" in out and "--resume" in out
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]  # no worker left behind
