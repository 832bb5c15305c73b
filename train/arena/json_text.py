"""Compact JSON text of the arena's messages and stored records, written by orjson where it agrees with the standard
library.

``compact(value)`` is ``json.dumps(value, separators=(",", ":"))``'s value, written by orjson about 8 times faster
on a turn (3 KB when a draw lists its up to 32 stays with their text). Its text is the standard library's wherever
it is all ASCII, but for floats: orjson writes some of them in another form of the same number (``0.00001`` for
``1e-05``), and a NaN or an infinity as ``null`` where the standard library writes ``NaN``, which is not JSON. A text
with another character (a name or a view in words may hold one, which the standard library escapes) is written by
the standard library, escaped as before; so is a value orjson does not take (a key
that is not a string, an integer past 64 bits), and then the standard library's error is raised.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["compact"]

_ENCODER = json.JSONEncoder(separators=(",", ":"))


def compact(value: Any) -> str:
    """``json.dumps(value, separators=(",", ":"))``, faster."""
    try:
        data = orjson.dumps(value)
    except TypeError:
        return _ENCODER.encode(value)
    return data.decode("ascii") if data.isascii() else _ENCODER.encode(value)
