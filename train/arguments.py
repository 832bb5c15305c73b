"""argparse types of the ``bourre`` command line: each turns one argument's text into its value, or says in an
``argparse.ArgumentTypeError`` what it expected (argparse prints it in one line and exits 2)."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from typing import Any

__all__ = ["at_most", "duration", "port", "positive", "rule_option", "seed"]


def rule_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE read as JSON when it parses (numbers, true/false/null), else as a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    words = {"true": True, "false": False, "none": None, "null": None}
    if raw.strip().lower() in words:
        return key.strip(), words[raw.strip().lower()]
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text}")
    return value


def at_most(most: int) -> Callable[[str], int]:
    """An argparse type: an integer from 1 to ``most``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer from 1 to {most:,}, got {text!r}") from None
        if not 1 <= value <= most:
            raise argparse.ArgumentTypeError(f"expected an integer from 1 to {most:,}, got {text}")
        return value

    return parse


def seed(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text}")
    return value


def port(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {text}")
    return value


def duration(unit: str) -> Callable[[str], float]:
    """An argparse type: a finite number of ``unit`` above 0 (0 or less would close every table at once or give up
    at once; nan or inf never)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of {unit}, got {text!r}") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"expected a finite number of {unit} above 0, got {text}")
        return value

    return parse
