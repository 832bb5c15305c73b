"""Ray backend of the duplicate evaluation and the tournament: their chunks of deals as Ray tasks.

=================== ========================================================================
Install             ``pip install "bourre-rl[ray]"`` (Ray with RLlib)
Call                ``evaluate("heuristic", "random", players=4, deals=500, backend="ray")``
Command line        ``bourre eval --candidate heuristic --players 4 --backend ray [--address ADDRESS]``
=================== ========================================================================

``train.eval.jobs.run_jobs`` hands its work here when ``backend="ray"``: the same chunks of
``CHUNK_DEALS`` deals as the process pool, each run by the same function, one Ray task per chunk,
and the results put back in chunk order. A chunk's outcome depends only on the chunk (its deals and
its agent seeds), never on where or when it ran, so the report is identical to the local backend's
for the same seed.

Which Ray instance
------------------
* Ray already initialised in this process (``ray.init`` called by the caller): that instance is
  used as it is, and left running.
* ``address`` given (``"auto"`` on a cluster node, or ``"ray://HOST:10001"`` for a remote
  client): the evaluation connects to that cluster, uses all of its CPUs, and disconnects at the
  end. Every node needs bourre-rl installed, at the driver's version.
* Neither: a local instance with ``workers`` CPUs is started for the call and shut down after it.

Before connecting to an ``address``, the cluster is tried within ``connect_timeout`` seconds (default
``CONNECT_TIMEOUT``, 60; ``"auto"`` first looks for the address of a cluster on this machine): a plain TCP
connection to its port, then a throwaway process that joins it. Ray itself would retry an address where
nothing (or something other than Ray) listens for minutes, or end in a traceback. No cluster there is a
``ClusterUnreachableError`` (a ``ValueError``, exit status 2 on the command line) naming the address.

Agents that read files
----------------------
A spec whose variant names a file on the driver (``ppo:runs/x/policy.npz``) cannot be opened as
such on a worker of another machine. The driver reads each such file once and puts its bytes in
Ray's object store; a worker writes them to its own temporary folder (named by the content's
SHA-256, so one copy per node and file) and builds the agent from that copy. The spec rewritten
is the only difference, and agents are built from the file's contents, so results do not change.
Hand histories (``histories=``) are not supported: each worker would write them on its own disk.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from tqdm import tqdm

__all__ = [
    "CONNECT_TIMEOUT",
    "ClusterUnreachableError",
    "check_cluster",
    "file_specs",
    "localize_job",
    "ray_instance",
    "run_jobs_ray",
]

_Job = TypeVar("_Job")
_Result = TypeVar("_Result")

INSTALL_HINT = 'the Ray backend needs Ray: pip install "bourre-rl[ray]"'
CONNECT_TIMEOUT = 60.0
"""Seconds to wait for a Ray cluster's port to answer before giving up on its address."""


class ClusterUnreachableError(ValueError):
    """No Ray cluster answers at the address given (or, for ``"auto"``, none runs on this machine)."""


def import_ray() -> Any:
    """The ``ray`` module, or an ``ImportError`` that says how to install it."""
    try:
        import ray
    except ImportError as err:
        raise ImportError(INSTALL_HINT) from err
    return ray


def _local_cluster() -> str | None:
    """The address of the Ray cluster that ``"auto"`` would join (``RAY_ADDRESS``, else the last ``ray start`` of
    this machine, else a running one), or None."""
    from ray._private import services

    try:
        return str(services.get_ray_address_from_environment("auto", None))
    except ConnectionError:
        return None


def _host_port(address: str) -> tuple[str, int]:
    """Host and port of ``HOST:PORT`` or ``ray://HOST:PORT``; ``ClusterUnreachableError`` if it is neither."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ClusterUnreachableError(f"--address {address}: expected auto, HOST:PORT or ray://HOST:PORT")
    return host.strip("[]"), int(port)


def check_cluster(address: str, connect_timeout: float = CONNECT_TIMEOUT) -> None:
    """``ClusterUnreachableError`` naming ``address`` unless a Ray cluster's port answers there within
    ``connect_timeout`` seconds (for ``"auto"``: unless a cluster runs on this machine and answers)."""
    target = address
    if address == "auto":
        found = _local_cluster()
        if found is None:
            raise ClusterUnreachableError(
                "--address auto: no Ray cluster runs on this machine (start one with "
                "ray start --head, or give its address)"
            )
        target = found
    host, port = _host_port(target)
    shown = address if target == address else f"{address} ({target})"
    started = time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=connect_timeout):
            pass
    except OSError as err:
        raise ClusterUnreachableError(
            f"--address {shown}: no Ray cluster answers there within {connect_timeout:g} s "
            f"({err.strerror or err}); check the address, or start the cluster with "
            f"ray start --head"
        ) from None
    # Something listens; whether it is Ray only a connection tells, and ray.init retries one that is not for
    # minutes in compiled code that cannot be interrupted: a throwaway process connects first, killed at the
    # deadline. It costs the seconds of one more connection, once per evaluation.
    left = max(connect_timeout - (time.monotonic() - started), 1.0)
    code = (
        f"import ray; ray.init(address={target if address == 'auto' else address!r}, configure_logging=False, "
        f"log_to_driver=False); ray.shutdown()"
    )
    try:
        probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=left)
    except subprocess.TimeoutExpired:
        raise ClusterUnreachableError(
            f"--address {shown}: a port answers there, but no Ray cluster could be joined "
            f"within {connect_timeout:g} s; check the address"
        ) from None
    if probe.returncode != 0:
        lines = [line for line in probe.stderr.splitlines() if line.strip() and not line.startswith((" ", "["))]
        reason = lines[-1] if lines else f"exit status {probe.returncode}"
        raise ClusterUnreachableError(f"--address {shown}: no Ray cluster could be joined there ({reason})")


@contextmanager
def ray_instance(address: str | None, num_cpus: int, connect_timeout: float = CONNECT_TIMEOUT) -> Iterator[Any]:
    """The Ray instance to submit to (module docstring), as the ``ray`` module; started and stopped here unless
    the caller had already initialised Ray. ``ClusterUnreachableError`` if ``address`` does not answer within
    ``connect_timeout`` seconds."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    # The dashboard and its agents would take seconds to start and a core to run, for nothing an evaluation shows.
    if address is None:
        ray.init(num_cpus=num_cpus, include_dashboard=False, configure_logging=False)
    else:
        check_cluster(address, connect_timeout)
        try:
            ray.init(address=address, configure_logging=False)
        except (ConnectionError, RuntimeError, TimeoutError) as err:  # a port that answers, but not as Ray
            reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise ClusterUnreachableError(f"--address {address}: no Ray cluster there ({reason})") from None
    try:
        yield ray
    finally:
        ray.shutdown()


# ---------------------------------------------------------------------------- agents that read files
def _spec_strings(job: Any) -> Iterator[str]:
    """Every string of a job's fields, alone or in a tuple: the agent specs among them."""
    for field in dataclasses.fields(job):
        value = getattr(job, field.name)
        if isinstance(value, str):
            yield value
        elif isinstance(value, tuple):
            yield from (v for v in value if isinstance(v, str))


def file_specs(jobs: Sequence[Any]) -> dict[str, Path]:
    """The specs of ``jobs`` whose variant (``name:VARIANT``) is a file on this machine, each with its file."""
    found: dict[str, Path] = {}
    for job in jobs:
        for spec in _spec_strings(job):
            _, sep, variant = spec.partition(":")
            if sep and spec not in found and Path(variant).is_file():
                found[spec] = Path(variant)
    return found


def _local_copy(content: bytes, suffix: str) -> Path:
    """``content`` in this machine's temporary folder, named by its hash; written once, atomically."""
    folder = Path(tempfile.gettempdir()) / "bourre-ray-files"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha256(content).hexdigest()}{suffix}"
    if not path.is_file():
        # Another task of this node may write the same file at the same time: each writes its own temporary
        # file and renames it into place, so no reader ever sees half a file.
        handle, temporary = tempfile.mkstemp(dir=folder, suffix=suffix)
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        os.replace(temporary, path)
    return path


def localize_job(job: _Job, files: Mapping[str, tuple[str, bytes]]) -> _Job:
    """``job`` with every spec of ``files`` (spec -> (file suffix, bytes)) pointing at a copy on this machine."""
    if not files:
        return job
    local = {
        spec: f"{spec.partition(':')[0]}:{_local_copy(content, suffix)}" for spec, (suffix, content) in files.items()
    }
    changes: dict[str, Any] = {}
    for field in dataclasses.fields(job):  # type: ignore[arg-type]
        value = getattr(job, field.name)
        if isinstance(value, str) and value in local:
            changes[field.name] = local[value]
        elif isinstance(value, tuple) and any(isinstance(v, str) and v in local for v in value):
            changes[field.name] = tuple(local.get(v, v) if isinstance(v, str) else v for v in value)
    return dataclasses.replace(job, **changes)  # type: ignore[type-var]


def _run_localized(fn: Callable[[_Job], _Result], job: _Job, files: Mapping[str, tuple[str, bytes]]) -> _Result:
    """A Ray task: ``fn(job)`` with the job's files read from the object store."""
    return fn(localize_job(job, files))


# ---------------------------------------------------------------------------- the tasks
def run_jobs_ray(
    fn: Callable[[_Job], _Result],
    jobs: Sequence[_Job],
    sizes: Sequence[int],
    workers: int,
    progress: bool,
    desc: str,
    address: str | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> list[_Result]:
    """``[fn(job) for job in jobs]`` as Ray tasks, one CPU each, with a progress bar counting ``sizes``.

    ``fn`` must be a module-level function that the workers can import; ``jobs`` are dataclasses whose string
    fields (alone or in tuples) are agent specs or plain values (module docstring, Agents that read files);
    ``connect_timeout``: seconds to wait for the cluster at ``address`` (module docstring, Which Ray instance)."""
    if workers < 1:
        raise ValueError(f"workers: expected at least 1, got {workers}")
    if connect_timeout <= 0:
        raise ValueError(f"connect_timeout: expected > 0 seconds, got {connect_timeout}")
    with ray_instance(address, workers, connect_timeout) as ray:
        # One object for all the files, put once: every task that names it reads the same copy from its node.
        files = {spec: (path.suffix, path.read_bytes()) for spec, path in file_specs(jobs).items()}
        files_ref = ray.put(files)
        task = ray.remote(num_cpus=1)(_run_localized)
        pending = {task.remote(fn, job, files_ref): i for i, job in enumerate(jobs)}
        results: list[Any] = [None] * len(jobs)
        with tqdm(total=sum(sizes), disable=not progress, unit="deal", desc=f"{desc} (ray)", dynamic_ncols=True) as bar:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    i = pending.pop(ref)
                    results[i] = ray.get(ref)
                    bar.update(sizes[i])
    return results
