"""The reports on the terminal: ``bourre eval``'s and ``bourre ladder``'s tables drawn with rich, from the
``TextTable`` of ``train.eval.report`` (the same tables that ``markdown_table`` writes into the reports' files)."""

from __future__ import annotations

from typing import Any

__all__ = ["agent_counts_line", "print_eval", "print_tournament", "rich_table"]


def rich_table(table: Any, title: str, caption: str | None = None, no_wrap: bool = False, **style: Any) -> Any:
    """A ``train.eval.report.TextTable`` as a rich table; its label columns (left-aligned) never wrap."""
    from rich.table import Table

    out = Table(title=title, caption=caption, **style)
    for name, right in zip(table.columns, table.right, strict=True):
        out.add_column(name, justify="right" if right else "left", no_wrap=no_wrap or not right)
    for row in table.rows:
        out.add_row(*row)
    return out


def print_eval(console: Any, report: Any) -> None:
    from bourre_env.words import plural
    from train.eval.report import advantage_table, field_name, session_line, side_table

    field = field_name(report)
    session = getattr(report, "session", 1)
    for t in report.tables:
        games = plural(t.deals, "deal") if session == 1 else f"{plural(t.deals, 'session')} of {session} deals"
        console.print(
            rich_table(
                side_table(report, t),
                f"{report.candidate} vs {field}: {t.players} players, {games} x {t.players} "
                f"seats (duplicate) + 1 all-field table, seed {report.seed}",
            )
        )
        if session > 1:
            console.print(session_line(t), markup=False, soft_wrap=True)
    console.print(
        rich_table(
            advantage_table([report], compact=True),
            f"Advantage of {report.candidate} over {field}, chips per deal [95% CI"
            + ("]" if session == 1 else f" over sessions; x {session} for chips per session]"),
            caption="table: minus the other seats at its table; replacement: minus the field's "
            "agent in its seat at the all-field table",
        )
    )


def print_tournament(console: Any, report: Any) -> None:
    from rich import box

    from train.eval.tournament import matrix_table, rating_table

    for t in report.tables:
        # Compact (a simple frame, +-half-widths), to fit narrow terminals.
        console.print(
            rich_table(
                rating_table(report, t, compact=True),
                f"Tournament: {t.players} players, {t.games_text()} x {t.players} rotations, seed {report.seed}",
                caption=f"{t.ranking_note()}; chips per deal in antes; "
                f"vs all-{report.baseline}: chips minus {report.baseline}'s in the same seat at a "
                f"table of {report.baseline} only ({t.baseline_chips:+.3f} there)",
                no_wrap=True,
                box=box.SIMPLE_HEAD,
                pad_edge=False,
            )
        )
        grids = [
            ("margin: chips per deal of the row agent minus the column agent's", "same deals, same tables", t.margin)
        ]
        if t.payoff_note() is not None:  # everyone sat at every table: its rows would be constant
            console.print(t.payoff_note())
        else:
            grids.insert(
                0,
                (
                    "chips per deal of the row agent at tables with the column agent",
                    "diagonal: over all the row agent's tables",
                    t.payoff,
                ),
            )
        for title, caption, matrix in grids:
            console.print(rich_table(matrix_table(t, matrix), title, caption=caption, box=box.SIMPLE_HEAD))


def agent_counts_line(players: int, counts: dict[str, Any]) -> str:
    """One line of the counts a candidate kept of its own play at one table size (an llm agent's moves, fallbacks,
    retries and tokens: docs/llm.md), its text fields (a model, a prompt's version) first."""
    words = [f"{key} {value}" for key, value in counts.items() if isinstance(value, str) and value]
    numbers = [
        f"{key.replace('_', ' ')} {value:,.1f}" if isinstance(value, float) else f"{key.replace('_', ' ')} {value:,}"
        for key, value in counts.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    ]
    errors = counts.get("errors") or {}
    if errors:
        numbers.append("errors " + ", ".join(f"{kind} {count}" for kind, count in sorted(errors.items())))
    return f"candidate's own counts at {players} players: " + "; ".join([*words, *numbers])
