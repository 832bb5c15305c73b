"""Files the project writes appear whole or not at all (``bourre_env.atomic_files``)."""

from __future__ import annotations

import os
import signal
import socket
import stat
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


# ---------------------------------------------------------------------------- what is at the path
def test_a_symlink_is_followed_and_its_target_replaced_whole(tmp_path: Path) -> None:
    real = tmp_path / "data" / "report.json"
    real.parent.mkdir()
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "report.json"
    link.symlink_to(real)
    atomic_files.write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"
    assert real.stat().st_mode & 0o777 == 0o600  # an existing file keeps its permission bits
    assert sorted(p.name for p in real.parent.iterdir()) == ["report.json"]  # the temporary was beside the target


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "model.npz"
    link.symlink_to(tmp_path / "elsewhere.npz")
    with atomic_files.replacing(link, ".npz") as tmp:
        tmp.write_bytes(b"weights")
    assert link.is_symlink() and (tmp_path / "elsewhere.npz").read_bytes() == b"weights"


def test_a_character_device_is_written_through_never_replaced() -> None:
    before = os.stat("/dev/null")
    atomic_files.write_text("/dev/null", "discarded")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_device_is_an_os_error_and_stays_a_device(tmp_path: Path) -> None:
    before = os.stat("/dev/full")
    with pytest.raises(OSError):
        atomic_files.write_text("/dev/full", "x" * 10_000)
    after = os.stat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_a_fifo_is_written_through_to_its_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    atomic_files.write_bytes(fifo, b"streamed")
    reader.join(10)
    assert received == [b"streamed"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_a_socket_or_folder_is_refused_in_one_line_before_anything_is_made(tmp_path: Path) -> None:
    sock_path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(sock_path))
        for target in (sock_path, tmp_path):
            with pytest.raises(ValueError, match=r"is a (socket|folder)") as err:
                atomic_files.write_text(target, "x")
            assert "\n" not in str(err.value)
            with pytest.raises(ValueError, match="--save: "):
                atomic_files.check_writable_file(target, "--save")
        assert stat.S_ISSOCK(os.stat(sock_path).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["s"]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a block device needs root")
def test_a_block_device_is_refused(tmp_path: Path) -> None:
    node = tmp_path / "disk"
    try:
        os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(7, 200))  # a loop device number: never opened
    except OSError as err:
        pytest.skip(f"cannot make a device node here: {err}")
    for write in (lambda: atomic_files.write_text(node, "x"), lambda: atomic_files.check_writable_file(node, "--json")):
        with pytest.raises(ValueError, match="is a block device, not a regular file"):
            write()
    assert stat.S_ISBLK(os.stat(node).st_mode)


def test_check_writable_file_follows_links_and_accepts_devices(tmp_path: Path) -> None:
    atomic_files.check_writable_file("/dev/null", "--save")
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "missing" / "deep" / "out.json")
    atomic_files.check_writable_file(link, "--save")  # the target's folder is made, as for a plain path
    assert (tmp_path / "missing" / "deep").is_dir()
