"""The run folder of a trainer: a new run never lands silently on top of an earlier one.

A new run needs an empty (or absent) folder. ``--resume`` continues the run already there (the trainer
checks its checkpoint); ``--overwrite`` starts a new run in its place, deleting the files and folders that
the trainer names as its outputs first, so that nothing of the old run (a checkpoint that ``--resume``
would pick up, TensorBoard events, snapshots) mixes with the new one. Anything else in the folder stays.
Shared by the trainers of ``train/``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

__all__ = ["claim_run_dir"]


def claim_run_dir(run_dir: Path, *, resume: bool, overwrite: bool, outputs: Iterable[str]) -> None:
    """Check ``run_dir`` for a run about to start, and with ``overwrite`` clear the earlier run's ``outputs``.

    ``outputs``: names of the files and folders the trainer writes in a run folder. ``ValueError`` when a new run
    (neither flag) would start in a folder that is not empty, when both flags are given, or when ``run_dir`` is a
    file. With ``resume`` nothing is checked or changed here: resuming needs the earlier run's files.
    """
    if resume and overwrite:
        raise ValueError("--resume continues the run in the run folder and --overwrite replaces it: give one")
    if run_dir.exists() and not run_dir.is_dir():
        raise ValueError(f"run_dir: {run_dir} is a file, not a folder")
    if resume or not run_dir.is_dir():
        return
    entries = sorted(p.name for p in run_dir.iterdir())
    if not entries:
        return
    if not overwrite:
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise ValueError(f"run_dir: {run_dir} is not empty ({shown}); continue its run with --resume, replace it "
                         f"with --overwrite, or choose another --run-dir")
    for name in outputs:
        path = run_dir / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()

