"""A compilation is never silent: numba's compile events are announced, counted and timed
(``bourre_env.compile_notice``)."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path

import pytest
from numba import njit

from bourre_env import compile_notice

ROOT = Path(__file__).resolve().parent.parent


def test_a_compilation_is_announced_once_then_summed(caplog: pytest.LogCaptureFixture) -> None:
    @njit  # not cached: compiled on its first call in every process
    def add_one(x: int) -> int:
        return x + 1

    # a burst still open (a kernel compiled by the test before this one, in this process) would take add_one in
    # without a line of its own: wait until it has ended
    deadline = time.monotonic() + 30
    while compile_notice._bursts.burst_start is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    before = compile_notice.compile_seconds()
    with caplog.at_level(logging.INFO, logger="bourre_env"):
        assert add_one(1) == 2
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any("compiled" in r.getMessage() for r in caplog.records):
            time.sleep(0.1)
    messages = [r.getMessage() for r in caplog.records if r.name == "bourre_env"]
    started = [m for m in messages if m.startswith("compiling ")]
    assert len(started) == 1 and "add_one" in started[0] and "once after an install" in started[0]
    assert any(m.startswith("compiled ") and "functions in" in m for m in messages)
    assert compile_notice.compile_seconds() > before
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="bourre_env"):
        assert add_one(2) == 3  # compiled already: nothing to say
    assert not caplog.records


def test_the_notice_can_be_silenced() -> None:
    code = "import bourre_env\nfrom numba import njit\nf = njit(lambda x: x * 2)\nassert f(2) == 4\n"
    loud = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "compiling " in loud.stderr and "numba" in loud.stderr
    quiet = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"BOURRE_COMPILE_NOTICE": "0", "PATH": ""},
    )
    assert quiet.returncode == 0 and "compiling" not in quiet.stderr
