"""Ctrl-C during ``bourre eval``: the workers stop at once, the command exits 130, every file it wrote is whole."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXITS_WITHIN = 20.0
"""Seconds from Ctrl-C to the command's exit: a bound on a command that hangs or plays its 100,000 deals out (many
minutes), not a figure the test measures. The exit takes 0.3-0.6 s on a quiet machine; 5.2 s was seen on a loaded
CI machine, whose two cores ran other tests' processes."""


def _start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    """``bourre ARGS`` from this checkout in its own process group, as a terminal runs a command: a Ctrl-C there
    reaches the command and its workers together."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "train.cli", *args],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _deals_done(progress: str) -> int:
    """The most deals the progress bar has shown done (it redraws at most every 0.1 s, so it may skip a count)."""
    return max((int(n) for n in re.findall(r"\| (\d+)/", progress)), default=0)


def _wait_for(condition: object, what: str, limit: float = 300.0) -> None:
    # The default is for the start: with numba's cache cold, each spawned worker compiles the kernels it runs.
    deadline = time.monotonic() + limit
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_stops_the_workers_and_leaves_whole_histories(tmp_path: Path, workers: str) -> None:
    histories = tmp_path / "hist"
    process = _start(
        "eval",
        "--candidate",
        "heuristic",
        "--field",
        "random",
        "--players",
        "5",
        "--deals",
        "100000",
        "--workers",
        workers,
        "--save-histories",
        str(histories),
        "--out",
        "out",
        "--no-progress",
        cwd=tmp_path,
    )
    try:
        _wait_for(
            lambda: len(list(histories.glob("5p/*.json"))) >= 30 or process.poll() is not None,
            "the first hand histories",
        )
        assert process.poll() is None, process.communicate()[1][-3000:]
        os.killpg(process.pid, signal.SIGINT)
        interrupted = time.monotonic()
        _, stderr = process.communicate(timeout=30)
        took = time.monotonic() - interrupted
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, stderr[-3000:]
    assert took < EXITS_WITHIN, f"exited {took:.1f} s after Ctrl-C"
    assert "Traceback" not in stderr
    # Nothing is written after the exit: the workers are gone, not finishing their chunks.
    count = len(list(histories.rglob("*")))
    time.sleep(1.0)
    assert len(list(histories.rglob("*"))) == count
    files = [p for p in histories.rglob("*") if p.is_file()]
    assert files and all(p.suffix == ".json" for p in files), "temporaries left behind"
    for path in files:
        json.loads(path.read_text())  # whole: none is empty or cut short
    assert not (tmp_path / "out" / "eval.json").exists()  # an interrupted evaluation reports nothing
    _wait_for(lambda: _group_is_gone(process.pid), "the workers to be gone", limit=EXITS_WITHIN)


def _group_is_gone(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    return False


def test_ctrl_c_stops_a_tournament_and_its_workers(tmp_path: Path) -> None:
    process = _start(
        "eval",
        "--tournament",
        "random",
        "heuristic",
        "--players",
        "4",
        "--deals",
        "100000",
        "--workers",
        "2",
        "--out",
        "out",
        cwd=tmp_path,
    )
    stderr: list[str] = []
    pipe = process.stderr
    assert pipe is not None
    # The progress bar (on stderr) says when the first chunks are done.
    reader = threading.Thread(target=lambda: stderr.extend(iter(lambda: pipe.read(1), "")), daemon=True)
    reader.start()
    try:
        _wait_for(lambda: _deals_done("".join(stderr)) >= 40 or process.poll() is not None, "the first chunks")
        assert process.poll() is None, "".join(stderr)[-3000:]
        os.killpg(process.pid, signal.SIGINT)
        interrupted = time.monotonic()
        process.wait(timeout=30)
        took = time.monotonic() - interrupted
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    reader.join(timeout=5)
    assert process.returncode == 130, "".join(stderr)[-3000:]
    assert took < EXITS_WITHIN, f"exited {took:.1f} s after Ctrl-C"
    assert "Traceback" not in "".join(stderr)
    assert not list((tmp_path / "out").glob("tournament*"))
    _wait_for(lambda: _group_is_gone(process.pid), "the workers to be gone", limit=EXITS_WITHIN)
