"""The refusal both web servers answer with: ``TableError(status, message)`` becomes a JSON ``{"error": message}``
with that HTTP status, in one line, never a traceback. (Its name is the browser table's, where it was born; the
arena's routes raise it too.)"""

from __future__ import annotations

__all__ = ["TableError"]


class TableError(Exception):
    """A request the server refuses; ``status`` is the HTTP status the server answers with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
