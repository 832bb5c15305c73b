"""The SQL of the people's matches: stored like any match, in the arena's ``matches`` table, under statuses of their
own (``STATUSES``) that the ladder never reads."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from train.arena.people import bounds
from train.arena.people.handles import _handles
from train.arena.storage import Store, bots, matches

__all__ = ["is_bot", "people_matches", "settle", "start"]


def start(store: Store, match: str, request: dict[str, Any]) -> Any:
    """Store a person's match as running (its request flagged ``people``); a future."""
    values = {"id": match, "created": time.time(), "request": json.dumps(request), "status": bounds.STATUSES[0]}
    return store.submit(sa.insert(matches), values)


def settle(store: Store, match: str, status: str, report: dict[str, Any] | None) -> Any:
    """Store a person's match as settled (``Store.finish_match`` settles ``running`` matches only); a future."""
    values = {"status": status, "report": None if report is None else json.dumps(report)}
    return store.submit(sa.update(matches).where(matches.c.id == match, matches.c.status == bounds.STATUSES[0]), values)


def is_bot(store: Store, name: str) -> bool:
    """Whether ``name`` is a registered bot's (a person may not take it)."""
    with store.engine.connect() as db:
        return db.execute(sa.select(bots.c.name).where(bots.c.name == name)).first() is not None


def people_matches(store: Store, limit: int = 200, offered: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The newest ``limit`` matches with a person: id, created, status, person, seats (an operator's ``offered``
    spec by its handle), deals played, and the person's chips per deal and table advantage (None before the match
    ends)."""
    found = []
    shown = {spec: handle for handle, spec in _handles(offered).items()}
    with store.engine.connect() as db:
        query = (
            sa.select(matches.c.id, matches.c.created, matches.c.status, matches.c.request, matches.c.report)
            .where(matches.c.status.in_(bounds.STATUSES))
            .order_by(matches.c.created.desc(), matches.c.id.desc())
            .limit(limit)
        )
        for match_id, created, status, request, report in db.execute(query):
            body, done = json.loads(request), json.loads(report) if report else None
            person = str(body.get("people", ["?"])[0])
            label = f"bot:{bounds.PERSON_PREFIX}{person}"
            mine = [r for r in (done or {}).get("results", []) if r.get("label") == label]
            found.append(
                {
                    "match": match_id,
                    "created": float(created),
                    "status": status.removeprefix("people-"),
                    "person": person,
                    "seats": [shown.get(s, s) for s in body["seats"]],
                    "deals": None if done is None else done.get("deals"),
                    "chips": mine[0]["side"]["chips"] if mine else None,
                    "advantage": mine[0]["advantage"] if mine else None,
                }
            )
    return found
