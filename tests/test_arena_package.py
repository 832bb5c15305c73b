"""The arena package's docstring is its map: one row for each of its modules and subpackages, no row for a module
that is gone (issue 65: a reader finds every room of the arena there)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ARENA = Path(__file__).resolve().parents[1] / "train" / "arena"


def table_rows(docstring: str) -> list[str]:
    """The names in the first column of the docstring's module table (its rows that start with ````name````)."""
    return re.findall(r"^``([a-z_]+)``\s", docstring, flags=re.MULTILINE)


def arena_modules(folder: Path = ARENA) -> set[str]:
    """The package's modules (``.py`` files but ``__init__``) and subpackages (folders with an ``__init__.py``)."""
    modules = {path.stem for path in folder.glob("*.py") if path.name != "__init__.py"}
    return modules | {path.parent.name for path in folder.glob("*/__init__.py")}


def test_table_rows_and_arena_modules_read_what_they_say(tmp_path: Path) -> None:
    assert table_rows("intro ``not_a_row``\n\n``view``   a view\n``people``  a package\n  ``x`` indented\n") == [
        "view",
        "people",
    ]
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "store.py").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    (tmp_path / "static").mkdir()  # a folder of files, not a package
    assert arena_modules(tmp_path) == {"store", "sub"}


def test_the_arena_docstring_names_each_of_its_modules_once() -> None:
    docstring = ast.get_docstring(ast.parse((ARENA / "__init__.py").read_text())) or ""
    rows = table_rows(docstring)
    assert len(rows) == len(set(rows)), f"named twice: {sorted(r for r in rows if rows.count(r) > 1)}"
    modules = arena_modules()
    assert not modules - set(rows), f"modules of train/arena its docstring does not name: {sorted(modules - set(rows))}"
    assert not set(rows) - modules, f"rows for modules that are not there: {sorted(set(rows) - modules)}"
