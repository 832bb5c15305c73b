"""How much memory a run may take, checked before it allocates.

A size from the command line (tables, deals, workers) turns into arrays at once; one that cannot fit ends
in a numpy ``MemoryError`` traceback after a long wait, and one that just fits takes the whole machine.
``check_fits`` compares what a run is about to allocate with the memory the system says is available and
refuses, in one line naming the option, anything over ``SHARE`` of it.
"""

from __future__ import annotations

import os

__all__ = ["SHARE", "available_bytes", "check_fits", "describe_bytes"]

SHARE = 0.8
"""The part of the available memory one run may plan to take; the rest stays for the system and Python itself."""


def available_bytes() -> int | None:
    """Memory the system can give without swapping (Linux ``MemAvailable``), or None where it cannot tell."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def describe_bytes(n: float) -> str:
    """``n`` bytes in the largest binary unit that keeps it at least 1 (``"42.3 GiB"``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def check_fits(needed: float, what: str, available: int | None = None) -> None:
    """``ValueError`` if ``needed`` bytes are more than ``SHARE`` of the available memory.

    ``what`` names the size that asks for it (``"--tables 20000000"``), so the message says what to lower;
    ``available`` overrides the system's figure (tests). Where the system cannot tell, nothing is refused.
    """
    free = available_bytes() if available is None else available
    if free is not None and needed > SHARE * free:
        raise ValueError(
            f"{what} needs about {describe_bytes(needed)} of memory, more than this machine can give "
            f"({describe_bytes(free)} available); use a smaller size"
        )
