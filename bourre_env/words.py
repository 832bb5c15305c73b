"""A count said in words: ``plural(1, "function")`` is ``"1 function"``, ``plural(3, "function")`` is
``"3 functions"``. Every line the package and its commands print with a count says it through here, so that no
line reads "1 functions"."""

from __future__ import annotations


def plural(count: int, word: str, words: str | None = None) -> str:
    """``count`` and ``word``, or ``words`` (``word`` + "s" unless given) when ``count`` is not 1; thousands are
    grouped (``1,024 files``). ``words`` carries what else agrees with the count: ``plural(n, "table is",
    "tables are")``."""
    return f"{count:,} {word if count == 1 else words or word + 's'}"
