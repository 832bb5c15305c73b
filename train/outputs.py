"""A command's results never replace earlier ones silently: what a command wrote over is named on its last line.

The policy of every ``bourre`` command that writes results (``eval``, ``eval --tournament``, ``ladder``, ``play
--save``): a result file at the path an earlier run wrote is replaced, whole (``bourre_env.atomic_files``), and the
command's last line names each file it replaced and when the earlier one was written, so a rerun of a documented
command works and nobody loses a result unawares. A run folder is another matter (``train.run_dir``): its files are
the state that ``--resume`` continues, so a new run refuses a folder that is not empty. The command takes an
``Earlier`` of its output paths before its work and asks it, after the writes, what they replaced.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping
from pathlib import Path

__all__ = ["Earlier"]

SHOWN = 3
"""Replaced files named one by one; more are counted (a folder of hand histories holds thousands)."""


def _files(path: Path, depth: int) -> dict[Path, os.stat_result]:
    """The regular files at ``path``: itself, or those of the folder ``path`` and of its subfolders ``depth`` deep."""
    try:
        if path.is_file():
            return {path: path.stat()}
        if not path.is_dir():
            return {}
        found: dict[Path, os.stat_result] = {}
        for entry in path.iterdir():
            if entry.is_file():
                found[entry] = entry.stat()
            elif depth > 0 and entry.is_dir() and not entry.is_symlink():
                found.update(_files(entry, depth - 1))
        return found
    except OSError:  # unreadable: nothing there to name (the write itself reports what is wrong)
        return {}


@dataclasses.dataclass(frozen=True)
class Earlier:
    """The files at a command's output paths before its work (``Earlier.at``), to name those its writes replaced."""

    files: Mapping[Path, os.stat_result]

    @classmethod
    def at(cls, *paths: Path | None, depth: int = 0) -> Earlier:
        """The files now at ``paths`` (files, or folders whose files a command writes; ``None`` for an output not
        asked for); ``depth``: how deep into subfolders a folder's files are taken."""
        files: dict[Path, os.stat_result] = {}
        for path in paths:
            if path is not None:
                files.update(_files(Path(path), depth))
        return cls(files)

    def replaced(self) -> tuple[list[Path], list[Path]]:
        """The earlier files written since: those replaced (a new file renamed over one, or one rewritten) and those
        appended to (the same file, longer: a language model's transcript)."""
        replaced: list[Path] = []
        appended: list[Path] = []
        for path, before in self.files.items():
            try:
                now = path.stat()
            except OSError:
                continue
            if (now.st_ino, now.st_mtime_ns, now.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size):
                continue
            grown = now.st_ino == before.st_ino and now.st_size > before.st_size
            (appended if grown else replaced).append(path)
        return sorted(replaced), sorted(appended)

    def line(self) -> str | None:
        """``replaced runs/eval/eval.json (written 2026-12-02 10:31)``, or None when no earlier file was written."""
        from bourre_env.words import plural

        replaced, appended = self.replaced()
        parts = []
        if len(replaced) > SHOWN:
            folder = Path(os.path.commonpath(replaced))
            times = sorted(self._when(path) for path in replaced)
            span = times[0] if times[0] == times[-1] else f"{times[0]} to {times[-1]}"
            parts.append(f"replaced {plural(len(replaced), 'file')} under {folder} (written {span})")
        elif replaced:
            parts.append("replaced " + ", ".join(f"{path} (written {self._when(path)})" for path in replaced))
        if appended:
            parts.append("appended to " + ", ".join(map(str, appended)))
        return "; ".join(parts) or None

    def _when(self, path: Path) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(self.files[path].st_mtime))
