"""JSON text from outside (a file, a request, a bot's message), parsed strictly: what ``json.loads`` accepts, less an
object that gives a key twice and, where asked, a string that is not text. ``bourre_env.history`` reads histories
with it and offers it to the servers (``train.web``, ``train.arena``).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["NotTextError", "strict_json"]


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):  # a key given twice: name the first one repeated, in the text's order
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {key!r} is given twice in one object")
            seen.add(key)
    return found


class NotTextError(ValueError):
    """JSON whose strings are not all text: a lone UTF-16 surrogate (``strict_json``)."""


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def strict_json(text: str | bytes | bytearray, text_only: bool = True) -> Any:
    """JSON text parsed as ``json.loads`` does, except that an object holding a key twice is a ``ValueError`` (the
    standard library keeps the last silently: a file or a request must not say two things at once), and so, with
    ``text_only``, is a string holding half of a UTF-16 surrogate pair (``NotTextError``: ``"\\ud800"`` alone is
    valid JSON, but no text, which no answer could quote back in UTF-8)."""
    data = json.loads(text, object_pairs_hook=_unique_keys)
    escaped = _SURROGATE_ESCAPE.search(text) if isinstance(text, str) else _SURROGATE_ESCAPE_BYTES.search(text)
    if text_only and escaped:
        try:
            json.dumps(data, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            raise NotTextError("a string holds a lone UTF-16 surrogate (\\ud800 to \\udfff): not text") from None
    return data
