"""A griffe extension of the site's API reference (mkdocs.yml): reStructuredText simple tables become Markdown tables.

The module docstrings are read in a terminal (``help(bourre_env.bourre_v0)``) as much as on the site, and their
tables are written as reStructuredText simple tables, ``=====`` borders whose columns a reader sees at a glance and
``tests/test_docs_tables.py`` parses. The site renders docstrings as Markdown, which prints such a table as one
paragraph of ``=`` signs; this extension hands the renderer each table as a Markdown pipe table instead, rows that
continue the row above (an empty first column) joined into it. A table it cannot read is left as it is, and the
site's hook (``docs/hooks/site.py``) then fails the strict build on it.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from griffe import Extension, Object

# a border: runs of "=" separated by spaces, two columns at least (one run alone is a Markdown heading's underline)
BORDER = re.compile(r"^(?P<indent>[ \t]*)=+(?: +=+)+[ \t]*$")


def _columns(border: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"=+", border)]


def _cells(line: str, columns: list[tuple[int, int]]) -> list[str] | None:
    """The line's text in each column (the last runs to the line's end), or None where text lies in a gap."""
    gaps = [(end, next_start) for (_, end), (next_start, _) in pairwise(columns)]
    if any(line[end:next_start].strip() for end, next_start in gaps):
        return None
    bounds = [start for start, _ in columns[1:]] + [len(line)]
    return [line[start:bound].strip() for (start, _), bound in zip(columns, bounds, strict=True)]


def _table_end(lines: list[str], first: int) -> int | None:
    """The index of the closing border of the table whose top border is ``lines[first]``, or None."""
    for number in range(first + 1, len(lines)):
        if BORDER.match(lines[number]) and (number + 1 == len(lines) or not lines[number + 1].strip()):
            return number
    return None


def _markdown_table(lines: list[str], indent: str) -> list[str] | None:
    """A simple table (its borders included) as the lines of a pipe table, or None if it is not one."""
    columns = _columns(lines[0])
    inner = [number for number, line in enumerate(lines) if BORDER.match(line)]
    if len(inner) > 3 or any(_columns(lines[number]) != columns for number in inner):
        return None
    header_end = inner[1] if len(inner) == 3 else 0
    rows: list[list[str]] = []
    header: list[str] = [""] * len(columns)
    for number, line in enumerate(lines):
        if number in inner or not line.strip():
            continue
        cells = _cells(line, columns)
        if cells is None:
            return None
        if number < header_end:
            header = [" ".join(filter(None, pair)) for pair in zip(header, cells, strict=True)]
        elif not cells[0] and rows:  # an empty first column continues the row above
            rows[-1] = [" ".join(filter(None, pair)) for pair in zip(rows[-1], cells, strict=True)]
        else:
            rows.append(cells)

    def row(cells: list[str]) -> str:
        return indent + "| " + " | ".join(cell.replace("|", r"\|") for cell in cells) + " |"

    return [row(header), indent + "|" + "|".join(" --- " for _ in columns) + "|", *map(row, rows)]


def tables_to_markdown(docstring: str) -> str:
    """Rewrites each reStructuredText simple table of a docstring as a Markdown pipe table; the rest is unchanged."""
    lines = docstring.split("\n")
    out: list[str] = []
    number = 0
    while number < len(lines):
        match = BORDER.match(lines[number])
        end = _table_end(lines, number) if match else None
        table = _markdown_table(lines[number : end + 1], match["indent"]) if match and end is not None else None
        if table is None or end is None:
            out.append(lines[number])
            number += 1
            continue
        out.extend(table)
        number = end + 1
    return "\n".join(out)


class SimpleTables(Extension):
    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = tables_to_markdown(obj.docstring.value)
