"""Files that appear whole or not at all.

Every file the project writes (hand histories, evaluation reports, run folders, checkpoints, models) is
written to a temporary file in the same folder and then renamed over its name: a rename within one file
system is atomic, so a reader, or a run interrupted by Ctrl-C or a crash, sees either the old file, or no
file, or the new file whole, never a 0-byte or half-written one.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

__all__ = ["check_writable_file", "check_writable_folder", "replacing", "write_bytes", "write_text"]


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], suffix: str = "") -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; on a clean exit it replaces ``path``, on an error it is removed.

    ``suffix`` is the temporary file's ending, for writers that choose a format by it (``savefig``, ``np.savez``).
    """
    target = Path(path)
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix or ".tmp", dir=target.parent)
    tmp = Path(name)
    try:
        os.close(handle)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would otherwise become the file's mode
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Ctrl-C and a terminate wait until the block is done: a short write then finishes, or never started, instead
    of leaving its temporary file behind or its file unwritten.

    Python runs its signal handlers in the main thread whichever thread the signal reached, so blocking the
    signals in this thread (``pthread_sigmask``) is not enough: a process with other threads (numba's, a BLAS
    library's) receives them there. Instead, while the block runs, SIGINT and SIGTERM only record that they came;
    after it, the handlers in place before are put back and each signal that came is raised again for them. Only
    the main thread can set handlers; in another thread the signals go to the main thread's handlers as always,
    which leaves this thread's write alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def record(signum: int, frame: FrameType | None) -> None:
        arrived.append(signum)

    before = {sig: signal.signal(sig, record) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            # None: a handler not set from Python, which Python cannot set back; the default is the nearest
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        for signum in dict.fromkeys(arrived):
            signal.raise_signal(signum)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (flushed to disk before the rename); returns the path."""
    with _interrupts_held(), replacing(path) as tmp, open(tmp, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    return Path(path)


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the path."""
    return write_bytes(path, text.encode("utf-8"))


def check_writable_folder(folder: str | os.PathLike[str], option: str) -> None:
    """Create ``folder`` if missing and write and remove a temporary file in it, so that a command that will write
    there says what is wrong (``ValueError`` naming ``option``) before its work, not after it."""
    folder = Path(folder)
    for part in (folder, *folder.parents):
        if part.exists():
            if not part.is_dir():
                raise ValueError(f"{option}: {part} is a file, not a folder")
            break
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=".bourre-write-check-", dir=folder)
        os.close(handle)
        os.unlink(probe)
    except OSError as err:
        raise ValueError(f"{option}: cannot write to the folder {folder}: {err.strerror or err}") from None


def check_writable_file(path: str | os.PathLike[str], option: str) -> None:
    """``check_writable_folder`` for the folder of ``path``; ``ValueError`` too if ``path`` is a folder."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{option}: {path} is a folder; give a file name")
    check_writable_folder(path.parent, option)
