"""A flat arguments dataclass read by tyro with its ``--help`` in titled groups.

The trainers keep one flat ``Args`` dataclass (a docstring per field, saved whole to ``args.json`` and read as
``args.NAME`` everywhere), but a flat ``--help`` of fifty flags hides the few a short run sets. tyro titles a box
of flags per nested dataclass, so ``grouped_cli`` builds one nested dataclass per group from ``Args``'s own fields
(their types, defaults and docstrings: nothing is written twice), with the group's prefix left out so every flag
keeps its flat name, and turns what tyro parses back into ``Args``.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from collections.abc import Sequence
from typing import Annotated, Any, TypeVar

import tyro

__all__ = ["field_docstrings", "grouped_cli", "grouped_fields"]

T = TypeVar("T")


def field_docstrings(cls: type) -> dict[str, str]:
    """Each field's docstring (the string literal under it in ``cls``'s source), by field name."""
    body = ast.parse(inspect.cleandoc(inspect.getsource(cls))).body[0]
    assert isinstance(body, ast.ClassDef)
    docs: dict[str, str] = {}
    for node, after in zip(body.body, body.body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def grouped_fields(cls: type, groups: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[str, list[str]]]:
    """``groups`` checked against ``cls``'s fields: every field in exactly one group, no unknown name (so a field
    added to ``Args`` and forgotten here is an error in the tests, not a flag missing from ``--help``)."""
    names = [f.name for f in dataclasses.fields(cls)]
    listed = [name for _, members in groups for name in members]
    unknown = sorted(set(listed) - set(names))
    twice = sorted({name for name in listed if listed.count(name) > 1})
    missing = [name for name in names if name not in listed]
    if unknown or twice or missing:
        raise ValueError(f"{cls.__name__} help groups: unknown {unknown}, listed twice {twice}, in no group {missing}")
    return [(title, list(members)) for title, members in groups]


def grouped_cli(
    cls: type[T],
    groups: Sequence[tuple[str, Sequence[str]]],
    *,
    args: Sequence[str],
    prog: str,
    description: str,
) -> T:
    """``cls`` from the command line ``args`` as ``tyro.cli(cls, ...)`` reads it (the same flags, values and
    errors), with ``--help`` in one titled box per group, in the order given. A group's title is an identifier
    (``run`` shows as "run options")."""
    hints = typing.get_type_hints(cls, include_extras=True)
    docs = field_docstrings(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]  # cls is a dataclass
    outer: list[tuple[str, Any, Any]] = []
    for title, members in grouped_fields(cls, groups):
        inner: list[tuple[str, Any, Any]] = []
        for name in members:
            field = fields[name]
            default: dict[str, Any] = (
                {"default": field.default}
                if field.default is not dataclasses.MISSING
                else {"default_factory": field.default_factory}
            )
            inner.append(
                (name, Annotated[hints[name], tyro.conf.arg(help=docs.get(name))], dataclasses.field(**default))
            )
        group = dataclasses.make_dataclass(f"{cls.__name__}_{title}", inner)
        outer.append((title, Annotated[group, tyro.conf.OmitArgPrefixes], dataclasses.field(default_factory=group)))
    parsed: Any = tyro.cli(
        dataclasses.make_dataclass(f"{cls.__name__}Groups", outer), args=list(args), prog=prog, description=description
    )
    values: dict[str, Any] = {}
    for title, _, _ in outer:
        group_value = getattr(parsed, title)
        values.update({f.name: getattr(group_value, f.name) for f in dataclasses.fields(group_value)})
    return cls(**values)
