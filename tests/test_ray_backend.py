"""The Ray backend of the evaluation and the tournament: the same reports as the local backend, files shipped
through the object store, clear errors. One local Ray instance of 2 CPUs serves the whole module."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason='the Ray backend needs the ray extra: pip install "bourre-rl[ray]"')

from agents.ppo import SHIPPED_MODEL  # noqa: E402
from train import cli  # noqa: E402
from train.eval import ray_backend as rb  # noqa: E402
from train.eval.duplicate import evaluate  # noqa: E402
from train.eval.tournament import tournament  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def ray_instance() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False)
    yield
    ray.shutdown()


def test_evaluation_on_ray_equals_the_local_backend() -> None:
    # 45 deals: three chunks of 20, 20 and 5, so the chunks finish out of order and must be put back in order.
    kwargs = dict(candidate="heuristic", field="random", players=(2, 3), deals=45, seed=11, progress=False)
    local = evaluate(**kwargs, workers=1)
    remote = evaluate(**kwargs, workers=2, backend="ray")
    assert remote.to_dict() == local.to_dict()


def test_tournament_on_ray_equals_the_local_backend() -> None:
    kwargs = dict(pool=["random", "heuristic", "heuristic:tight"], players=3, deals=25, seed=4, progress=False)
    assert tournament(**kwargs, backend="ray").to_dict() == tournament(**kwargs).to_dict()


def test_policy_files_reach_the_workers_through_the_object_store(tmp_path: Path) -> None:
    policy = tmp_path / "driver_only" / "policy.npz"
    policy.parent.mkdir()
    shutil.copy(SHIPPED_MODEL, policy)
    spec = f"ppo:{policy}"
    kwargs = dict(candidate=spec, field="heuristic", players=3, deals=4, seed=2, progress=False)
    assert evaluate(**kwargs, backend="ray").to_dict() == evaluate(**kwargs).to_dict()

    # What a worker builds the agent from: its own copy, named by content, not the driver's path.
    job = rb.localize_job(_Job(spec, ("heuristic", spec), 3), {spec: (".npz", policy.read_bytes())})
    name, _, local_path = job.candidate.partition(":")
    assert name == "ppo" and Path(local_path) != policy and Path(local_path).read_bytes() == policy.read_bytes()
    assert job.field == ("heuristic", job.candidate) and job.chunk == 3
    assert rb.file_specs([_Job(spec, ("heuristic", "ppo:no/such/file.npz"), 0)]) == {spec: policy}


@dataclasses.dataclass(frozen=True)
class _Job:
    candidate: str
    field: tuple[str, ...]
    chunk: int


def test_cli_backend_ray_writes_the_local_backend_report(tmp_path: Path) -> None:
    common = ["eval", "--candidate", "heuristic", "--field", "random", "--players", "3", "--deals", "25", "--seed",
              "7", "--no-progress"]
    assert cli.main([*common, "--out", str(tmp_path / "local")]) == 0
    assert cli.main([*common, "--backend", "ray", "--out", str(tmp_path / "ray")]) == 0
    reports = [json.loads((tmp_path / side / "eval.json").read_text()) for side in ("local", "ray")]
    assert reports[0] == reports[1]


def test_bad_backend_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="backend"):
        evaluate("random", deals=2, backend="dask", progress=False)
    with pytest.raises(ValueError, match="address"):
        evaluate("random", deals=2, address="auto", progress=False)
    with pytest.raises(ValueError, match="histories"):
        evaluate("random", deals=2, backend="ray", histories=tmp_path, progress=False)
    with pytest.raises(ValueError, match="backend"):
        tournament(["random", "heuristic"], deals=2, backend="spark", progress=False)
