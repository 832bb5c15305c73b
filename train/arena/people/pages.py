"""The people's results as HTML (``GET /people``), apart from the bots' ladder: every name escaped."""

from __future__ import annotations

import html
import time
from collections.abc import Collection, Sequence
from typing import Any

from train.arena.people import bounds

__all__ = ["people_page"]


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def people_page(found: Sequence[dict[str, Any]], live: Collection[str] = ()) -> str:
    """The people's results (``storage.people_matches``) as HTML, apart from the bots' ladder; every name escaped.
    ``live``: the matches this server plays now (another one still ``running`` was left by a server that stopped, or
    is another server's)."""

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:+.3f}"

    person = f"bot:{bounds.PERSON_PREFIX}"
    head = ["created (UTC)", "person", "at the table with", "status", "deals", "chips/deal", "table advantage"]
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{cell}</td>"
            for cell in (
                _e(time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(m["created"]))),
                _e(m["person"]),
                _e(", ".join(s for s in m["seats"] if not s.startswith(person))),
                _e(m["status"] + (" (or interrupted)" if m["status"] == "running" and m["match"] not in live else "")),
                _e("-" if m["deals"] is None else m["deals"]),
                _e(number(m["chips"])),
                _e(number(m["advantage"])),
            )
        )
        + "</tr>"
        for m in found
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>People at the arena</title>'
        "<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
        "td,th{padding:.3em .7em;border-bottom:1px solid #ddd;text-align:left}</style></head><body>"
        "<h1>People at the arena</h1><p>Matches played by people, kept apart from the bots' ladder: they count in no "
        'rating. <a href="/play">Take a seat</a> &middot; <a href="/leaderboard">the bots\' leaderboard</a> &middot; '
        '<a href="/api/people">JSON</a></p><table><tr>'
        + "".join(f"<th>{_e(h)}</th>" for h in head)
        + "</tr>"
        + rows
        + "</table></body></html>"
    )
