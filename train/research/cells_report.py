"""The end of a research command that measures cells: the Markdown table printed, the wall time, and every cell
written as JSON with the command that made it (``style_zoo``, ``session_variance``, ``value_of_information``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

__all__ = ["report_cells"]


class _Cell(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


def report_cells(
    lines: Sequence[str],
    cells: Sequence[_Cell],
    command: str,
    seconds: float,
    json_path: Path | None,
    settings: Mapping[str, Any],
) -> None:
    """Print ``lines`` (the cells' Markdown) and the wall time; with ``json_path``, write ``{"command", *settings,
    "seconds", "cells"}`` there."""
    print("\n".join(lines))
    print(f"{seconds / 60:.1f} min of wall time")
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"command": command, **settings, "seconds": round(seconds, 1)}
        payload["cells"] = [cell.to_dict() for cell in cells]
        json_path.write_text(json.dumps(payload, indent=1) + "\n")
