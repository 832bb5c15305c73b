"""A settled match's hand histories, a page at a time, as the JSON bytes the leaderboard's routes answer with.

``GET /api/matches/ID/histories`` answers with up to ``MAX_PAGE_GAMES`` games: the whole match when it has no more
(the answer it has always had, plus ``offset``, ``total`` and ``next``), else its first page.

================ ======================================================================================================
``offset``       the first game, counted from 0 in (deal, rotation) order (default 0)
``limit``        games in the page, 1 to ``MAX_PAGE_GAMES`` (default ``MAX_PAGE_GAMES``)
================ ======================================================================================================

The answer: ``match``, ``status``, ``seats``, ``seed``, ``games`` (each ``deal``, ``rotation``, ``history``),
``all_field`` (the par games of the deals of this page: a reference match's all-field tables), ``offset``,
``total`` (the match's games) and ``next``: the path of the next page, or null on the last. A value that is not a
number in range is refused (400). The stored histories are copied into the answer as they are stored (JSON text
written by the arena), so a page costs a read and a join, never a decode and an encode of megabytes; it is built in a
thread, never on the event loop that runs the tables, and ``MAX_HEAVY`` such answers are built at once in all,
``MAX_HEAVY_PER_CLIENT`` for one client address (503 and 429 past them: ``train.web.http_input.Slots``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa

from train.arena.match import MatchSpec, public_label
from train.arena.ratings import StoredMatch
from train.arena.records import _stored, baselines
from train.arena.storage import RECONNECT_SECONDS, Store, games, matches
from train.web.errors import TableError

__all__ = ["MATCH_ID", "MAX_HEAVY", "MAX_HEAVY_PER_CLIENT", "MAX_PAGE_GAMES", "page", "page_bounds"]

MAX_PAGE_GAMES = 500
"""Games in one page of hand histories (about 1.5 KB each: some 750 KB a page)."""
MAX_HEAVY = 4
"""Pages of hand histories built at once, in all (503 past it)."""
MAX_HEAVY_PER_CLIENT = 2
"""Pages of hand histories built at once for one client address (429 past it)."""
MATCH_ID = re.compile(r"[0-9A-Za-z_-]{1,32}")
"""A match id in a path (the arena makes 16 hex digits); anything else is no match (404)."""
_SETTLED = ("finished", "aborted", "interrupted")
_COUNT = re.compile(r"[0-9]{1,10}")  # 10**9, the largest offset, has 10 digits


def page_bounds(query: Mapping[str, str]) -> tuple[int, int]:
    """``offset`` and ``limit`` of a request's query; ``TableError`` 400 for a value that is not a number in range."""
    found = []
    for name, default, low, high in (("offset", 0, 0, 10**9), ("limit", MAX_PAGE_GAMES, 1, MAX_PAGE_GAMES)):
        text = query.get(name)
        if text is None:
            found.append(default)
            continue
        if not _COUNT.fullmatch(text) or not low <= int(text) <= high:
            raise TableError(400, f"{name}: expected a whole number from {low} to {high}, got {text[:20]!r}")
        found.append(int(text))
    return found[0], found[1]


def _par_agent(request: str) -> str | None:
    """The name a match's par games are stored under (``MatchSpec.par_key``), None for a match without (or of an
    earlier version, whose reference field is its all-field table)."""
    try:
        return MatchSpec.from_request(json.loads(request), stored=True).par_key
    except ValueError:
        return None


def page(
    store: Store, match: str, offset: int = 0, limit: int = MAX_PAGE_GAMES, patience: float = RECONNECT_SECONDS
) -> bytes | None:
    """The JSON answer (bytes) for games ``offset`` to ``offset + limit`` of a settled match, or None for an unknown
    match or one still running (its bots are at the table and its secret unrevealed: no card is shown before it
    ends). ``all_field``: the par games of the page's deals (a reference match's all-field tables). Blocking: call it
    in a thread. A database server out of reach is waited for ``patience`` seconds (``Store.read``), then its
    ``sqlalchemy.exc.DBAPIError`` raised."""

    def read() -> tuple[StoredMatch, int, list[Any], list[Any]] | None:
        with store.engine.connect() as db:
            row = db.execute(sa.select(matches).where(matches.c.id == match)).first()
            if row is None or row.status not in _SETTLED:
                return None
            total = db.execute(sa.select(sa.func.count()).select_from(games).where(games.c.match_id == match))
            played = list(
                db.execute(
                    sa.select(games.c.deal, games.c.rotation, games.c.history)
                    .where(games.c.match_id == match)
                    .order_by(games.c.deal, games.c.rotation)
                    .offset(offset)
                    .limit(limit)
                ).all()
            )
            stored = _stored(row, [])  # the match's seats, seed and reference field, as the ratings read them
            fields: list[Any] = []
            par = _par_agent(row.request) or (stored.field() or (0, None))[1]
            if par is not None and played:
                fields = list(
                    db.execute(
                        sa.select(baselines.c.deal, baselines.c.history)
                        .where(
                            baselines.c.field == par,
                            baselines.c.players == stored.players,
                            baselines.c.seed == stored.seed,
                            baselines.c.deal.in_(sorted({int(g[0]) for g in played})),
                        )
                        .order_by(baselines.c.deal)
                    ).all()
                )
            return stored, int(total.scalar_one()), played, fields

    found = store.read(read, patience)
    if found is None:
        return None
    stored, total, played, fields = found
    head = {
        "match": match,
        "status": stored.status,
        "seats": [public_label(s) for s in stored.seats],
        "seed": stored.seed,
    }
    end = offset + len(played)
    following = None if end >= total else f"/api/matches/{quote(match, safe='')}/histories?offset={end}&limit={limit}"
    tail = {"offset": offset, "total": total, "next": following}
    parts = [json.dumps(head, separators=(",", ":"))[:-1], ',"games":[']
    parts.append(",".join(f'{{"deal":{int(k)},"rotation":{int(r)},"history":{h}}}' for k, r, h in played))
    parts.append('],"all_field":[')
    parts.append(",".join(f'{{"deal":{int(k)},"history":{h}}}' for k, h in fields))
    parts.append("]," + json.dumps(tail, separators=(",", ":"))[1:])
    return "".join(parts).encode()
