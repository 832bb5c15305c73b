"""The tables of the evaluation reports, built once and shown two ways, and the cells and columns every report
table is made of.

Each function here builds one table of a report as a ``TextTable`` (column headers, alignments and the rows as
text); ``bourre eval`` prints it with rich (``train.cli``) and ``markdown_table`` writes the same table in the
Markdown of a training run's ``report.md`` (``train.runs``). A column added here appears in both. The
tournament's tables are built the same way, from these columns, in ``train.eval.tournament``.

The terminal is narrower than a page: ``compact=True`` gives a column its short header, and leaves out the
columns that have none (they are in the table's title, or in another table the terminal shows beside it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # only for annotations: duplicate.py imports this module's cells
    from train.eval.duplicate import EvalReport, SideStats, TableReport

__all__ = [
    "Column",
    "TextTable",
    "advantage_table",
    "ci_text",
    "half_width",
    "markdown_table",
    "percent",
    "session_line",
    "side_table",
    "table_of",
    "field_name",
    "signed",
    "with_ci",
]

_Row = TypeVar("_Row")


# ---------------------------------------------------------------------------- cells
def ci_text(ci: Sequence[float] | None, missing: str = "") -> str:
    """A 95% interval as ``[-0.123, +0.456]`` (chips per deal); ``missing`` where there is none (a single deal)."""
    return f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else missing


def signed(x: float | None) -> str:
    """Chips per deal, signed, three decimals; ``-`` for none."""
    return "-" if x is None else f"{x:+.3f}"


def with_ci(x: float, ci: Sequence[float] | None) -> str:
    """``+0.310 [+0.249, +0.371]``, or the value alone where there is no interval."""
    return f"{x:+.3f} {ci_text(ci)}" if ci else f"{x:+.3f}"


def percent(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def half_width(ci: Sequence[float] | None) -> str:
    """An interval as its half-width, the narrow form of the terminal."""
    return f"{(ci[1] - ci[0]) / 2:.3f}" if ci else "-"


# ---------------------------------------------------------------------------- tables
@dataclasses.dataclass(frozen=True)
class TextTable:
    """A table as text: one header and one alignment per column, rows of cells."""

    columns: list[str]
    right: list[bool]  # right-aligned (numbers) or not (names, labels)
    rows: list[list[str]]


@dataclasses.dataclass(frozen=True)
class Column(Generic[_Row]):
    header: str
    short: str | None  # the terminal's header; None: not shown there
    cell: Callable[[_Row], str]
    right: bool = True


def table_of(columns: Sequence[Column[_Row]], rows: Sequence[_Row], compact: bool) -> TextTable:
    shown = [c for c in columns if c.short is not None] if compact else list(columns)
    return TextTable(
        [(c.short if compact else c.header) or "" for c in shown],
        [c.right for c in shown],
        [[c.cell(row) for c in shown] for row in rows],
    )


def markdown_table(table: TextTable) -> list[str]:
    """The lines of ``table`` in Markdown."""

    def line(cells: list[str]) -> str:
        return "|" + "".join(f" {cell} |" if cell else " |" for cell in cells)

    separator = "|" + "".join("---:|" if right else "---|" for right in table.right)
    return [line(table.columns), separator, *(line(row) for row in table.rows)]


# ---------------------------------------------------------------------------- duplicate evaluation
def side_table(report: EvalReport, t: TableReport) -> TextTable:
    """One table size of an evaluation, side by side: the candidate's seats, the field's seats at its tables and
    the all-field table, per seat and deal."""
    sides = (t.candidate, t.field, t.baseline)
    rows: list[tuple[str, Callable[[SideStats], str]]] = [
        ("chips (antes) [95% CI]", lambda x: with_ci(x.chips, x.chips_ci95)),
        ("pot won", lambda x: percent(x.pot_win_rate)),
        ("played", lambda x: percent(x.play_rate)),
        ("bourré / deal played", lambda x: percent(x.bourre_rate_played)),
        ("bourré / deal dealt", lambda x: percent(x.bourre_rate_dealt)),
        ("tied for most tricks", lambda x: percent(x.tie_rate)),
        ("tricks", lambda x: f"{x.mean_tricks:.3f}"),
    ]
    return TextTable(
        ["per seat and deal", f"candidate: {report.candidate}", f"field: {field_name(report)}", "all-field table"],
        [False, True, True, True],
        [[label, *(cell(side) for side in sides)] for label, cell in rows],
    )


def field_name(report: EvalReport) -> str:
    """The field's spec, or its specs per seat joined by commas."""
    return report.field if isinstance(report.field, str) else ",".join(report.field)


_ADVANTAGE_COLUMNS: list[Column[tuple[EvalReport, TableReport]]] = [
    # the terminal's table is of one evaluation: its field and deals are in the titles
    Column("field", None, lambda r: field_name(r[0]), right=False),
    Column("players", "players", lambda r: str(r[1].players)),
    Column("deals", None, lambda r: str(r[1].deals)),
    Column(
        "table advantage (chips/deal) [95% CI]",
        "table advantage",
        lambda r: with_ci(r[1].advantage, r[1].advantage_ci95),
    ),
    Column(
        "replacement advantage [95% CI]",
        "replacement advantage",
        lambda r: with_ci(r[1].replacement_advantage, r[1].replacement_advantage_ci95),
    ),
    # the terminal shows these in side_table
    Column("own chips/deal", None, lambda r: signed(r[1].candidate.chips)),
    Column("played", None, lambda r: percent(r[1].candidate.play_rate)),
    Column("pot won", None, lambda r: percent(r[1].candidate.pot_win_rate)),
    Column("bourré", None, lambda r: percent(r[1].candidate.bourre_rate_dealt)),
]


def _variance_reduced(r: tuple[EvalReport, TableReport]) -> str:
    reduced = r[1].variance_reduced
    return "-" if reduced is None else with_ci(reduced.replacement_advantage, reduced.replacement_advantage_ci95)


_VARIANCE_REDUCED_COLUMN: Column[tuple[EvalReport, TableReport]] = Column(
    "replacement, variance-reduced [95% CI]", "variance-reduced (AIVAT)", _variance_reduced
)


def advantage_table(reports: Sequence[EvalReport], compact: bool = False) -> TextTable:
    """The candidate's two advantages over the field, one row per evaluation and table size; the variance-reduced
    replacement advantage (``train.eval.variance``) beside them where an evaluation has it."""
    rows = [(r, t) for r in reports for t in r.tables]
    columns = list(_ADVANTAGE_COLUMNS)
    if any(t.variance_reduced is not None for _, t in rows):
        at = next(i for i, c in enumerate(columns) if c.short == "replacement advantage") + 1
        columns.insert(at, _VARIANCE_REDUCED_COLUMN)
    return table_of(columns, rows, compact)


def session_line(t: Any) -> str:
    """What became of the pots at a table size's sessions: the mean pot left, shared by the table, and the sessions
    the pot bound cut."""
    tables = t.deals * (t.players + 1)
    line = (
        f"{t.players} players: {t.pot_left:,.1f} chips left in the pot at a session's end on average, shared "
        f"equally by the table's seats; {t.sessions_cut} of {tables} sessions cut short at the pot bound"
    )
    if t.sessions_cut or t.pot_left > POT_GREW * t.players:
        line += (
            "; the pot grew geometrically (bourré payments of the whole pot), so these figures measure its growth "
            "more than play: a pot limit (--rule pot_limit=20) keeps sessions comparable"
        )
    return line


POT_GREW = 100
"""Chips per seat left in the pot at a session's end, on average, past which ``session_line`` says the pot grew
geometrically: a table of sensible players leaves a few chips (1.6 to 6.4 against the heuristic field,
docs/evaluation.md), a never-passing field at 5 players thousands."""
