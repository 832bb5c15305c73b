"""The Ray backend of the evaluation and the tournament: the same reports as the local backend, files shipped
through the object store, clear errors. One local Ray instance of 2 CPUs serves the whole module."""

from __future__ import annotations

import dataclasses
import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason='the Ray backend needs the ray extra: pip install "bourre-rl[ray]"')

from agents.ppo import SHIPPED_MODEL  # noqa: E402
from train import cli  # noqa: E402
from train.eval import ray_backend as rb  # noqa: E402
from train.eval.duplicate import evaluate  # noqa: E402
from train.eval.tournament import tournament  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


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


def test_sessions_on_ray_equal_the_local_backend() -> None:
    # 5 sessions of 7 deals: chunks of 2, 2 and 1 sessions
    kwargs = dict(candidate="heuristic", field="random", players=3, deals=5, seed=11, progress=False, session=7)
    assert evaluate(**kwargs, workers=2, backend="ray").to_dict() == evaluate(**kwargs, workers=1).to_dict()


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
    common = [
        "eval",
        "--candidate",
        "heuristic",
        "--field",
        "random",
        "--players",
        "3",
        "--deals",
        "25",
        "--seed",
        "7",
        "--no-progress",
    ]
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


# ---------------------------------------------------------------------------- addresses where no cluster answers
def free_port() -> int:
    """A TCP port of this machine where nothing listens (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_address_where_nothing_listens_is_refused_at_once(scheme: str) -> None:
    address = f"{scheme}127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(rb.ClusterUnreachableError, match=f"--address {address}: no Ray cluster answers there"):
        rb.check_cluster(address, connect_timeout=2.0)
    assert time.monotonic() - started < 10


def test_an_address_that_does_not_answer_gives_up_after_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host that drops the connection attempt (neither accepts nor refuses): the probe waits ``connect_timeout``,
    then gives up. Whether a real address is dropped depends on the network, so the socket layer stands in."""
    asked: list[Any] = []

    def dropped(host_port: tuple[str, int], timeout: float) -> socket.socket:
        asked.append((host_port, timeout))
        raise TimeoutError("timed out")

    monkeypatch.setattr(rb.socket, "create_connection", dropped)
    with pytest.raises(rb.ClusterUnreachableError, match=r"--address 10\.1\.2\.3:6379: .* within 0\.5 s"):
        rb.check_cluster("10.1.2.3:6379", connect_timeout=0.5)
    assert asked == [(("10.1.2.3", 6379), 0.5)]


def test_a_port_that_answers_but_is_not_ray_is_given_up_at_the_timeout() -> None:
    """A listener that accepts and says nothing: ray.init itself would retry it for minutes."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(
            rb.ClusterUnreachableError,
            match=f"--address {address}: a port answers there, but no Ray cluster could be joined within 8 s",
        ):
            rb.check_cluster(address, connect_timeout=8.0)
        assert time.monotonic() - started < 20


def test_the_address_of_a_running_cluster_passes_the_check() -> None:
    """This module's Ray instance, joined from another process as a cluster would be."""
    rb.check_cluster(ray.get_runtime_context().gcs_address, connect_timeout=60.0)


@pytest.mark.parametrize("address", ["localhost", "ray://", "host:port", "127.0.0.1:70000"])
def test_a_malformed_address_is_refused(address: str) -> None:
    with pytest.raises(rb.ClusterUnreachableError, match="expected auto, HOST:PORT or ray://HOST:PORT"):
        rb.check_cluster(address, connect_timeout=0.5)


def test_auto_without_a_cluster_on_this_machine_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rb, "_local_cluster", lambda: None)
    with pytest.raises(rb.ClusterUnreachableError, match="--address auto: no Ray cluster runs on this machine"):
        rb.check_cluster("auto", connect_timeout=0.5)
    monkeypatch.setattr(rb, "_local_cluster", lambda: f"127.0.0.1:{free_port()}")
    with pytest.raises(rb.ClusterUnreachableError, match=r"--address auto \(127\.0\.0\.1:\d+\): no Ray cluster"):
        rb.check_cluster("auto", connect_timeout=0.5)


def test_the_command_line_exits_2_naming_the_address() -> None:
    """``bourre eval --backend ray --address`` where nothing listens: one line and exit status 2, in seconds (it
    used to retry for minutes); in a new process, which has no Ray instance of this module's to fall back on."""
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "train.cli",
            "eval",
            "--candidate",
            "random",
            "--deals",
            "2",
            "--backend",
            "ray",
            "--address",
            address,
            "--no-progress",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"--address {address}: no Ray cluster answers there" in out.stderr and "Traceback" not in out.stderr
    assert time.monotonic() - started < 60


def test_the_command_line_gives_up_on_a_silent_cluster_after_connect_timeout() -> None:
    """``--connect-timeout`` reaches the check: a listener that never answers is given up after it, not after 60 s."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "train.cli",
                "eval",
                "--candidate",
                "random",
                "--deals",
                "2",
                "--backend",
                "ray",
                "--address",
                address,
                "--connect-timeout",
                "3",
                "--no-progress",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert out.returncode == 2, out.stdout + out.stderr
    assert address in out.stderr and "within 3 s" in out.stderr and "Traceback" not in out.stderr
    assert time.monotonic() - started < 40


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_connect_timeout_that_is_not_a_positive_number_is_refused(value: str) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "train.cli",
            "eval",
            "--candidate",
            "random",
            "--backend",
            "ray",
            "--connect-timeout",
            value,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and "--connect-timeout" in out.stderr and "Traceback" not in out.stderr
