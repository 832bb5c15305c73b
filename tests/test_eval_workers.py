"""Worker processes of evaluation and training: the count is capped at the jobs and the CPUs, closing them takes
one deadline for all, and a terminated evaluation stops them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from train.eval import jobs
from train.ppo import workers as ppo_workers

ROOT = Path(__file__).resolve().parent.parent


def test_workers_are_capped_at_the_jobs_and_the_cpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert jobs.usable_workers(100_000, jobs=3, cpus=2) == 2
    assert "100,000 asked for" in capsys.readouterr().err
    assert jobs.usable_workers(8, jobs=1, cpus=2) == 1
    assert capsys.readouterr().err == ""  # capped by the jobs alone: nothing to warn of
    assert jobs.usable_workers(2, cpus=16) == 2
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="workers"):
            jobs.usable_workers(bad)  # type: ignore[arg-type]


def test_eval_with_a_huge_worker_count_finishes(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "train.cli", "eval", "--candidate", "random", "--deals", "2", "--players", "3"]
        + ["--workers", "100000", "--no-progress", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert re.search(r"with [\d,]+ workers?;", result.stdout) and (tmp_path / "eval.json").is_file()


class _Process:
    """A worker process that never stops by itself: ``join`` advances a shared fake clock by its timeout."""

    def __init__(self, clock: list[float], log: list[str], dies_on: str) -> None:
        self.clock, self.log, self.dies_on, self.alive = clock, log, dies_on, True

    def is_alive(self) -> bool:
        return self.alive

    def join(self, timeout: float | None = None) -> None:
        self.clock[0] += timeout or 0.0

    def terminate(self) -> None:
        self.log.append("terminate")
        self.alive = self.dies_on == "kill"

    def kill(self) -> None:
        self.log.append("kill")
        self.alive = False


class _Connection:
    def send(self, message: Any) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.mark.parametrize("dies_on", ["terminate", "kill"])
def test_closing_workers_that_do_not_stop_takes_one_deadline_for_all(
    monkeypatch: pytest.MonkeyPatch, dies_on: str
) -> None:
    """Ctrl-C during the warm start: workers still starting up never read "stop"; closing them waits on one
    deadline for all of them (seconds), not 15 s for each one in turn."""
    clock, log = [0.0], []
    monkeypatch.setattr(ppo_workers.time, "monotonic", lambda: clock[0])
    pool = ppo_workers.ProcessWorkers.__new__(ppo_workers.ProcessWorkers)
    pool.processes = [_Process(clock, log, dies_on) for _ in range(8)]
    pool.connections = [_Connection() for _ in range(8)]
    pool.in_flight = pool.jobs_out = False
    pool.close()
    assert clock[0] <= ppo_workers.STOP_SECONDS + ppo_workers.TERMINATE_SECONDS
    assert log.count("terminate") == 8 and log.count("kill") == (8 if dies_on == "kill" else 0)
    assert not any(p.is_alive() for p in pool.processes)


def test_a_terminated_evaluation_stops_its_workers(tmp_path: Path) -> None:
    """SIGTERM (kill, a scheduler, a container's stop) stops the command and its pool workers, as Ctrl-C does."""
    import signal

    command = [sys.executable, "-m", "train.cli", "eval", "--candidate", "heuristic", "--field", "heuristic"]
    command += ["--players", "3", "4", "--deals", "400", "--workers", "2", "--out", str(tmp_path)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    children: list[int] = []
    while time.monotonic() < deadline and len(children) < 2 and process.poll() is None:
        time.sleep(0.5)
        found = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        children = [int(pid) for pid in found]
    assert len(children) >= 2, "the pool never started"
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 128 + signal.SIGTERM
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in children):
        time.sleep(0.2)
    alive = [pid for pid in children if os.path.exists(f"/proc/{pid}") and "Z" not in _state(pid)]
    assert not alive, f"workers {alive} outlived the command"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return "Z"
