"""Shared by the training tests: ``bourre train`` in a subprocess, and the TensorBoard tags a run wrote."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def bourre_train(*argv: str, **kwargs: Any) -> subprocess.Popen:
    """``bourre train ARGV`` started from the checkout's root, its output (stdout and stderr together) as text."""
    return subprocess.Popen(
        [sys.executable, "-m", "train.cli", "train", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kwargs,
    )


def tensorboard_tags(folder: Path) -> set[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags: set[str] = set()
    for events in folder.glob("events.out.tfevents.*"):
        accumulator = EventAccumulator(str(events))
        accumulator.Reload()
        tags |= set(accumulator.Tags()["scalars"])
    return tags
