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
    assert any(m.startswith("compiled 1 function in ") for m in messages)  # one function: no "1 functions"
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


def test_a_compile_notice_starts_its_own_line_below_a_progress_bar() -> None:
    code = """
import logging, sys, time
from tqdm.auto import tqdm
import bourre_env
from numba import njit

handler = logging.StreamHandler()  # as the bourre command shows them
handler.setFormatter(logging.Formatter("%(message)s"))
logging.getLogger("bourre_env").addHandler(handler)
logging.getLogger("bourre_env").setLevel(logging.INFO)
with tqdm(total=4, desc="record heuristic", file=sys.stderr, mininterval=0) as bar:
    bar.update(1)
    f = njit(lambda x: x * 3)  # compiled on its first call: the notice comes while the bar is on the screen
    assert f(2) == 6
    time.sleep(2)  # past the end of the burst: the "compiled" line too
    bar.update(3)
"""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    err = result.stderr
    notices = [i for i, _ in enumerate(err) if err.startswith(("compiling ", "compiled "), i)]
    assert len(notices) == 2, err
    for i in notices:
        assert i == 0 or err[i - 1] in "\r\n", repr(err[max(0, i - 80) : i + 20])  # not after the bar's text
    assert "record heuristic: 100%" in err.splitlines()[-1]  # the bar redrawn below, and finished


def test_a_process_that_compiles_for_itself_shows_every_line_named() -> None:
    code = """
import sys, time
import bourre_env
from bourre_env import compile_notice
from numba import njit

if sys.argv[1] == "shown":
    compile_notice.show_lines("search worker 7: ")
f = njit(lambda x: x * 5)
assert f(2) == 10
time.sleep(2)  # past the end of the burst: the "compiled" line too
"""
    runs = {
        how: subprocess.run([sys.executable, "-c", code, how], cwd=ROOT, capture_output=True, text=True, timeout=300)
        for how in ("shown", "default")
    }
    lines = runs["shown"].stderr.splitlines()
    assert runs["shown"].returncode == 0, runs["shown"].stderr[-3000:]
    assert any(line.startswith("search worker 7: compiling ") for line in lines), lines
    assert any(line.startswith("search worker 7: compiled 1 function in ") for line in lines), lines
    # Python's last-resort handler alone shows the first line only: a process left so looks stuck once it is said
    assert "compiling " in runs["default"].stderr and "compiled 1 function" not in runs["default"].stderr


def test_the_arenas_search_worker_shows_its_own_compile_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    from train.arena import thinking
    from train.eval import duplicate

    shown: list[str] = []
    monkeypatch.setattr(compile_notice, "show_lines", shown.append)
    monkeypatch.setattr(duplicate, "play_deal", lambda *args, **kwargs: None)  # the warm game itself: not this test's
    thinking._warm()
    assert len(shown) == 1 and shown[0].startswith("search worker ") and shown[0].endswith(": ")
