"""The tables of the evaluation and tournament reports, built once and shown two ways.

Each function here builds one table of a report as a ``TextTable`` (column headers, alignments and the rows as
text); ``bourre eval`` prints it with rich (``train.cli``) and ``markdown_table`` writes the same table in the
Markdown of a training run's ``report.md`` (``train.runs``) and of ``tournament.md``
(``train.eval.tournament``). A column added here appears in every one of them.

The terminal is narrower than a page: ``compact=True`` gives a column its short header, and leaves out the
columns that have none (they are in the table's title, or in another table the terminal shows beside it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:  # only for annotations: tournament.py imports this module to write its Markdown
    from train.eval.duplicate import EvalReport, SideStats, TableReport
    from train.eval.tournament import AgentResult, TournamentReport, TournamentTable

__all__ = [
    "TextTable",
    "advantage_table",
    "ci_text",
    "markdown_table",
    "matrix_table",
    "percent",
    "rating_table",
    "side_table",
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


def _half_width(ci: Sequence[float] | None) -> str:
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
class _Column(Generic[_Row]):
    header: str
    short: str | None  # the terminal's header; None: not shown there
    cell: Callable[[_Row], str]
    right: bool = True


def _table(columns: Sequence[_Column[_Row]], rows: Sequence[_Row], compact: bool) -> TextTable:
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


_ADVANTAGE_COLUMNS: list[_Column[tuple[EvalReport, TableReport]]] = [
    # the terminal's table is of one evaluation: its field and deals are in the titles
    _Column("field", None, lambda r: field_name(r[0]), right=False),
    _Column("players", "players", lambda r: str(r[1].players)),
    _Column("deals", None, lambda r: str(r[1].deals)),
    _Column(
        "table advantage (chips/deal) [95% CI]",
        "table advantage",
        lambda r: with_ci(r[1].advantage, r[1].advantage_ci95),
    ),
    _Column(
        "replacement advantage [95% CI]",
        "replacement advantage",
        lambda r: with_ci(r[1].replacement_advantage, r[1].replacement_advantage_ci95),
    ),
    # the terminal shows these in side_table
    _Column("own chips/deal", None, lambda r: signed(r[1].candidate.chips)),
    _Column("played", None, lambda r: percent(r[1].candidate.play_rate)),
    _Column("pot won", None, lambda r: percent(r[1].candidate.pot_win_rate)),
    _Column("bourré", None, lambda r: percent(r[1].candidate.bourre_rate_dealt)),
]


def _variance_reduced(r: tuple[EvalReport, TableReport]) -> str:
    reduced = r[1].variance_reduced
    return "-" if reduced is None else with_ci(reduced.replacement_advantage, reduced.replacement_advantage_ci95)


_VARIANCE_REDUCED_COLUMN: _Column[tuple[EvalReport, TableReport]] = _Column(
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
    return _table(columns, rows, compact)


# ---------------------------------------------------------------------------- tournament
def rating_table(report: TournamentReport, t: TournamentTable, compact: bool = False) -> TextTable:
    """The agents of one table size, best rated first; ``compact``: intervals as half-widths."""
    interval: Callable[[Sequence[float] | None], str] = _half_width if compact else (lambda ci: ci_text(ci, "-"))
    vs = f"all-{report.baseline}"
    columns: list[_Column[tuple[int, AgentResult]]] = [
        _Column("rank", "#", lambda r: str(r[0])),
        _Column("agent", "agent", lambda r: r[1].name, right=False),
        _Column("mu", "mu", lambda r: f"{r[1].mu:.2f}"),
        _Column("sigma", "sigma", lambda r: f"{r[1].sigma:.2f}"),
        _Column("mu - 3 sigma", "mu-3sig", lambda r: f"{r[1].ordinal:.2f}"),
        _Column("chips/deal", "chips", lambda r: signed(r[1].chips)),
        _Column("95% CI", "+-95%", lambda r: interval(r[1].chips_ci95)),
        _Column(f"replacement vs {vs}", f"vs {vs}", lambda r: signed(r[1].replacement_advantage)),
        _Column("95% CI", "+-95%", lambda r: interval(r[1].replacement_advantage_ci95)),
        _Column("matches", "deals", lambda r: str(r[1].matches)),
        _Column("pot won", "pot won", lambda r: percent(r[1].pot_win_rate)),
        _Column("played", "played", lambda r: percent(r[1].play_rate)),
    ]
    return _table(columns, list(enumerate(t.agents, 1)), compact)


def matrix_table(t: TournamentTable, matrix: list[list[float | None]]) -> TextTable:
    """A matrix of one table size (``t.payoff`` or ``t.margin``): rows and columns in pool order."""
    return TextTable(
        ["", *t.names],
        [False] + [True] * len(t.names),
        [[name, *(signed(v) for v in row)] for name, row in zip(t.names, matrix, strict=True)],
    )
