"""Files that appear whole or not at all, and the checks of a path before a command reads or writes it.

Every file the project writes (hand histories, evaluation reports, run folders, checkpoints, models) is
written to a temporary file in the same folder and then renamed over its name: a rename within one file
system is atomic, so a reader, or a run interrupted by Ctrl-C or a crash, sees either the old file, or no
file, or the new file whole, never a 0-byte or half-written one.

What is at the path decides how it is written, and nothing but a regular file is ever replaced:

- nothing, or a regular file: written as above (an existing file keeps its permission bits; a new one gets 0644);
- a symbolic link: followed, and the file it points to is replaced as above (the link stays a link; a dangling
  link creates its target);
- a character device or a FIFO (``/dev/null``, ``/dev/stdout`` of a pipe, a named pipe): written through, as Unix
  tools write to them, never replaced; the whole content is made first, so a failed write (``/dev/full``) is an
  ``OSError`` after the work, and the device is left as it was;
- anything else (a folder, a block device, a socket): refused with a ``ValueError`` of one line, before anything is
  made.

A file the project reads (a policy or value file, a run folder's JSON) is checked by ``check_readable_file`` first:
nothing there, or something that is not a regular file (a FIFO, whose read would wait for a writer; ``/dev/zero``,
whose read never ends), is a ``ValueError`` of one line that says which.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

__all__ = [
    "check_readable_file",
    "check_writable_file",
    "check_writable_folder",
    "destination",
    "replacing",
    "write_bytes",
    "write_text",
]

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_readable_file(path: str | os.PathLike[str], what: str, hint: str = "") -> None:
    """``ValueError`` of one line unless ``path`` (links followed) is a regular file: ``"PATH: no such WHAT"`` and
    ``hint`` when nothing is there, ``"PATH: a FIFO (named pipe), not a WHAT"`` (or the like) when something else
    is; nothing is opened, so a pipe or a device is never read."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ValueError(f"{path}: no such {what}{hint}") from None
    except OSError as err:  # a file where a folder should be, a link loop, a folder we may not enter
        raise ValueError(f"{path}: cannot read the {what}: {err.strerror or err}") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"{path}: {_kind(mode)}, not a {what}")


def destination(path: str | os.PathLike[str]) -> tuple[Path, bool]:
    """Where a write to ``path`` lands and whether it is written through: ``(file, False)`` for a regular file or
    none (symbolic links followed: the file that is replaced), ``(path, True)`` for a character device or a FIFO,
    which are written into, never replaced. ``ValueError`` (one line) for anything else: a folder, a block device,
    a socket. Symbolic-link loops and unreadable folders are the ``OSError`` of ``os.stat``."""
    real = Path(os.path.realpath(path))
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        return real, False
    if stat.S_ISREG(mode):
        return real, False
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return Path(path), True
    shown = f"{path} (which resolves to {real})" if str(real) != os.path.abspath(path) else str(path)
    if stat.S_ISDIR(mode):
        raise ValueError(f"{shown} is a folder; give a file name")
    raise ValueError(
        f"{shown} is {_kind(mode)}, not a regular file: refused (a file is written as a regular file, or through a "
        "character device or a FIFO such as /dev/null)"
    )


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], suffix: str = "") -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; on a clean exit it replaces ``path``, on an error it is removed.

    ``suffix`` is the temporary file's ending, for writers that choose a format by it (``savefig``, ``np.savez``).
    ``path`` is resolved by ``destination`` first: a symbolic link's target is what is replaced, a character device
    or a FIFO is written through with the temporary's content (the temporary then lives in the system's temporary
    folder), and anything else is refused before the caller writes.
    """
    target, through = destination(path)
    folder = None if through else target.parent
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix or ".tmp", dir=folder)
    tmp = Path(name)
    try:
        os.close(handle)
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode) if not through else 0o644
        except FileNotFoundError:
            mode = 0o644
        os.chmod(tmp, mode)  # mkstemp's 0600 would otherwise become the file's mode
        yield tmp
        if through:
            # no O_CREAT, no O_TRUNC: the device or pipe must already be there, and stays what it is
            with open(tmp, "rb") as source, open(os.open(path, os.O_WRONLY), "wb") as sink:
                shutil.copyfileobj(source, sink)
            tmp.unlink()
        else:
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
    """Write ``data`` to ``path`` atomically (flushed to disk before the rename); returns the path. What is at
    ``path`` decides how (the module's docstring): a link's target is replaced, a device or FIFO written through,
    anything else not a regular file refused."""
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
    """``check_writable_folder`` for the folder of the file ``path`` resolves to (``destination``); ``ValueError``
    naming ``option`` too if ``path`` is a folder, a block device or a socket, which are never written. A character
    device or a FIFO, written through, must be there and writable."""
    try:
        target, through = destination(path)
    except ValueError as err:
        raise ValueError(f"{option}: {err}") from None
    except OSError as err:
        raise ValueError(f"{option}: cannot use {path}: {err.strerror or err}") from None
    if through:
        if not os.access(target, os.W_OK):
            raise ValueError(f"{option}: cannot write to {path}: permission denied")
        return
    check_writable_folder(target.parent, option)
