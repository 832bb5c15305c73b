"""The machine a benchmark's figures were taken on, and CPU time: what every benchmark prints in its first line and
writes in its JSON, since an absolute figure holds only for the processor and the load that measured it."""

from __future__ import annotations

import os
import platform
import resource
from pathlib import Path
from typing import Any


def cpu_seconds(who: int) -> float:
    """User + system CPU seconds of ``who`` (``resource.RUSAGE_SELF``, or ``RUSAGE_CHILDREN``: those waited for)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def cpu_name() -> str:
    """The processor's model name (Linux's /proc/cpuinfo), else what the platform module knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    """The machine, as the benchmarks' JSON holds it. Taken before the run: its load average is the other work's."""
    return {
        "cpu": cpu_name(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()),
    }


def machine_line(info: dict[str, Any]) -> str:
    """``machine_info`` in words, the start of a benchmark's first line."""
    load = info["load_average"]
    return (
        f"Python {info['python']} on {info['cpu']}, {info['cpu_count']} CPUs, load average "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
