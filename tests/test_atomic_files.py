"""Files the project writes appear whole or not at all (``bourre_env.atomic_files``)."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from bourre_env import atomic_files


def test_write_text_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    assert atomic_files.write_text(target, "new ünïcode") == target
    assert target.read_text(encoding="utf-8") == "new ünïcode"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file is left behind
    assert target.stat().st_mode & 0o777 == 0o644


def test_an_error_while_writing_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "model.npz"
    target.write_bytes(b"good")
    with pytest.raises(KeyboardInterrupt), atomic_files.replacing(target, suffix=".npz") as tmp:
        assert tmp.name.endswith(".npz") and tmp.parent == tmp_path
        tmp.write_bytes(b"half")
        raise KeyboardInterrupt
    assert target.read_bytes() == b"good"
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]


def test_a_missing_folder_is_an_os_error_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        atomic_files.write_bytes(tmp_path / "no" / "such.json", b"{}")
    assert list(tmp_path.iterdir()) == []


def _signal_from_another_thread_during_fsync(monkeypatch: pytest.MonkeyPatch, signum: int) -> list[str]:
    """Make the next ``fsync`` of ``atomic_files`` send ``signum`` to this process from another thread, which has
    the signal unblocked (as numba's and BLAS's threads have), and wait until Python has taken note of it. Returns
    the log of what happened, in order."""
    log: list[str] = []
    go, sent = threading.Event(), threading.Event()

    def sender() -> None:
        go.wait(10)
        os.kill(os.getpid(), signum)
        sent.set()

    helper = threading.Thread(target=sender, daemon=True)
    helper.start()  # before the write: a thread started inside it would inherit its signal mask
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        go.set()
        sent.wait(10)
        time.sleep(0.05)  # the main thread runs the Python handler of a signal received at its next bytecodes
        real_fsync(fd)
        log.append("written")

    monkeypatch.setattr(atomic_files.os, "fsync", fsync)
    return log


def test_ctrl_c_from_another_thread_waits_until_the_file_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "history.json"
    log = _signal_from_another_thread_during_fsync(monkeypatch, signal.SIGINT)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        atomic_files.write_text(target, "whole")
    assert log == ["written"]
    assert target.read_text() == "whole"
    assert [p.name for p in tmp_path.iterdir()] == ["history.json"]
    assert signal.getsignal(signal.SIGINT) is before


def test_a_terminate_waits_for_the_write_and_then_reaches_its_handler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "deal.json"
    unwound: list[str] = []

    def unwind(signum: int, frame: object) -> None:  # what a pool worker does (train.eval.jobs.ignore_interrupts)
        unwound.append("unwound")
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, unwind)
    try:
        log = _signal_from_another_thread_during_fsync(monkeypatch, signal.SIGTERM)
        with pytest.raises(SystemExit):
            atomic_files.write_text(target, "whole")
        assert log + unwound == ["written", "unwound"]
        assert target.read_text() == "whole"
        assert [p.name for p in tmp_path.iterdir()] == ["deal.json"]
        assert signal.getsignal(signal.SIGTERM) is unwind
    finally:
        signal.signal(signal.SIGTERM, previous)
