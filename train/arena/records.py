"""The ladder's queries of the arena's database (SQLAlchemy Core, for SQLite and PostgreSQL alike), beside
``train.arena.storage``, which owns the connection and the tables of the matches.

``baselines`` holds the all-field tables of the ladder (``train.arena.ratings``): a reference field's game on one
deal, keyed by (field, players, seed, deal); its outcome rows and its hand history. ``Book`` keeps what the
ratings are computed from: every stored match that is no longer running, read once (a stored match does not change
after), and the baselines of its reference matches; ``Book.standings()`` reads what settled since the last call
(the matches created since the first one running then, unless the count of settled matches says otherwise) and hands
it to ``train.arena.ratings.Rater``, which keeps the ratings up to date at the cost of what changed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa

from train.arena.games import public_label
from train.arena.ratings import BaselineKey, Rater, Standings, StoredMatch
from train.arena.storage import Store, games, match_bots, matches, metadata

__all__ = ["Book", "baselines", "bot_matches", "game_history", "insert_baseline", "match_histories"]

baselines = sa.Table(
    "baselines",
    metadata,
    sa.Column("field", sa.String(200), primary_key=True),
    sa.Column("players", sa.Integer, primary_key=True),
    sa.Column("seed", sa.BigInteger, primary_key=True),
    sa.Column("deal", sa.Integer, primary_key=True),
    sa.Column("outcomes", sa.Text, nullable=False),  # seat_outcomes rows, JSON
    sa.Column("history", sa.Text, nullable=False),  # the hand history, JSON (docs/hand_history.md)
)

_SETTLED = ("finished", "aborted", "interrupted")


def insert_baseline(
    store: Store, key: BaselineKey, outcomes: np.ndarray, history: dict[str, Any]
) -> Any:  # a concurrent.futures.Future, done once committed
    field, players, seed, deal = key
    values = {
        "field": field,
        "players": players,
        "seed": seed,
        "deal": deal,
        "outcomes": json.dumps(outcomes.tolist()),
        "history": json.dumps(history, separators=(",", ":")),
    }
    # the same deal's all-field table stored again (a match of built-in agents asked twice with one seed, or a
    # write tried again) keeps the first: a failed insert would fail the match, and the writes queued with it
    return store.submit(store.insert_or_keep(baselines), values)


def _stored(row: Any, rows: Sequence[Any]) -> StoredMatch:
    request = json.loads(row.request)
    seats = tuple(str(s) for s in request["seats"])
    n = len(seats)
    # a request of an earlier version has no format: it was played in rotations
    form = request.get("format", "rotations")
    by_deal: dict[int, dict[int, list[list[int]]]] = {}
    for deal, rotation, outcomes in rows:
        by_deal.setdefault(int(deal), {})[int(rotation)] = json.loads(outcomes)

    def expected(k: int) -> list[int]:
        return [0] if form == "session" else [k % n] if form == "single" else list(range(n))

    complete = sorted(k for k, games in by_deal.items() if set(games) == set(expected(k)))
    games = n if form == "rotations" else 1
    array = np.array([[by_deal[k][r] for r in expected(k)] for k in complete], dtype=np.int64).reshape(-1, games, n, 6)
    rotations = np.array([expected(k) for k in complete], dtype=np.int64).reshape(-1, games)
    report = json.loads(row.report) if row.report else None
    counts: list[dict[str, int] | None] = [None] * n
    for result in (report or {}).get("results", []):
        counts[int(result["entry"])] = result.get("counts")
    return StoredMatch(
        row.id,
        float(row.created),
        row.status,
        seats,
        int(request.get("seed", 0)),
        tuple(complete),
        array,
        tuple(counts),
        rotations,
        str(request.get("fallback")),
        form == "session",
    )


class Book:
    """The stored matches and baselines the ratings come from, read incrementally; thread-safe."""

    def __init__(self, store: Store, fields: Sequence[str], sizes: Sequence[int]) -> None:
        self.store = store
        self.fields = list(fields)
        self.sizes = list(sizes)
        self._lock = threading.Lock()
        self._rater = Rater(fields, sizes)
        self._since: float | None = None  # where the next look for settled matches starts (by creation)
        self._baseline_count = 0

    def standings(self) -> Standings:
        """The standings of every settled match (``train.arena.ratings.rate``), kept up to date by
        ``train.arena.ratings.Rater`` at the cost of what settled, or was stored, since the last call."""
        with self._lock:
            with self.store.engine.connect() as db:
                running = db.execute(sa.select(matches.c.created, matches.c.id).where(matches.c.status == "running"))
                running_keys = [(float(created), str(match)) for created, match in running]
                new = self._new_settled(db)
                for start in range(0, len(new), 500):
                    self._load(db, new[start : start + 500])
                count = db.execute(sa.select(sa.func.count()).select_from(baselines)).scalar_one()
                if count != self._baseline_count:  # an all-field table stored apart from its match: look again
                    self._load_baselines(db, self._rater.waiting())
                    self._baseline_count = count
            # the next look starts at the first match running now, which settles later, or at the newest settled
            self._since = min((created for created, _ in running_keys), default=self._rater.latest())
            return self._rater.standings(running_keys)

    def _new_settled(self, db: Any) -> list[str]:
        """The ids of the settled matches not read yet: those created since the last look's first running match
        (or its newest match), unless the count of settled matches says one settled outside that window (a match
        queued long before it was claimed, or a server whose clock is behind): then every id."""
        settled = sa.select(matches.c.id).where(matches.c.status.in_(_SETTLED))
        window = settled if self._since is None else settled.where(matches.c.created >= self._since)
        new = [m for m in db.execute(window).scalars() if m not in self._rater]
        # counted after the window was read: a match settled in between makes the count larger, never smaller
        count = db.execute(sa.select(sa.func.count()).select_from(settled.subquery())).scalar_one()
        if count != len(self._rater) + len(new):
            new = [m for m in db.execute(settled).scalars() if m not in self._rater]
        return new

    def _load(self, db: Any, ids: Sequence[str]) -> None:
        rows: dict[str, list[Any]] = {m: [] for m in ids}
        for match_id, deal, rotation, outcomes in db.execute(
            sa.select(games.c.match_id, games.c.deal, games.c.rotation, games.c.outcomes).where(
                games.c.match_id.in_(ids)
            )
        ):
            rows[match_id].append((deal, rotation, outcomes))
        loaded = [_stored(row, rows[row.id]) for row in db.execute(sa.select(matches).where(matches.c.id.in_(ids)))]
        # a match's all-field tables are stored before it settles (train.arena.server): read with it
        self._load_baselines(db, [group for m in loaded if (group := self._rater.needs(m)) is not None])
        self._rater.add_matches(loaded)

    def _load_baselines(self, db: Any, groups: Sequence[tuple[str, int, int]]) -> None:
        """The all-field tables of these (field, players, seed) not read yet (only configured cells' are used)."""
        groups = sorted(set(groups))
        key = sa.tuple_(baselines.c.field, baselines.c.players, baselines.c.seed)
        found: dict[BaselineKey, np.ndarray] = {}
        for start in range(0, len(groups), 500):
            query = sa.select(
                baselines.c.field, baselines.c.players, baselines.c.seed, baselines.c.deal, baselines.c.outcomes
            ).where(key.in_(groups[start : start + 500]))
            for field, players, seed, deal, outcomes in db.execute(query):
                baseline = (str(field), int(players), int(seed), int(deal))
                if baseline not in self._rater.baselines:
                    found[baseline] = np.array(json.loads(outcomes), dtype=np.int64)
        self._rater.add_baselines(found)

    def has_baselines(self, field: str, players: int, seed: int, deals: int) -> set[int]:
        """The deals of ``range(deals)`` whose all-field table is stored."""
        with self.store.engine.connect() as db:
            found = db.execute(
                sa.select(baselines.c.deal).where(
                    baselines.c.field == field,
                    baselines.c.players == players,
                    baselines.c.seed == seed,
                    baselines.c.deal < deals,
                )
            ).scalars()
            return {int(k) for k in found}


def bot_matches(store: Store, name: str, limit: int = 200) -> list[dict[str, Any]]:
    """The newest ``limit`` matches the bot sat in (not running): id, created, status, seats, seed, games, format.
    Read from ``match_bots`` by its index: the cost is the bot's ``limit`` newest matches, not the arena's whole
    history."""
    count = sa.select(sa.func.count()).select_from(games).where(games.c.match_id == matches.c.id).scalar_subquery()
    query = (
        sa.select(matches.c.id, matches.c.created, matches.c.status, matches.c.request, count)
        .select_from(match_bots.join(matches, matches.c.id == match_bots.c.match_id))
        .where(match_bots.c.name == name, matches.c.status.in_(_SETTLED))
        .order_by(match_bots.c.created.desc(), match_bots.c.match_id.desc())
        .limit(limit)
    )
    with store.engine.connect() as db:
        rows = db.execute(query).all()
    found = []
    for match_id, created, status, request, played in rows:
        body = json.loads(request)
        found.append(
            {
                "match": match_id,
                "created": float(created),
                "status": status,
                "seats": [public_label(str(s)) for s in body["seats"]],
                "seed": body.get("seed"),
                "games": int(played),
                "format": body.get("format", "rotations"),  # a request of an earlier version has none
            }
        )
    return found


def match_histories(store: Store, match: str) -> dict[str, Any] | None:
    """A settled match's hand histories, one per game in (deal, rotation) order, and the all-field tables of a
    reference match; None for an unknown match or one still running (its deals are played again in the next
    rotations: their cards must not be shown before it ends)."""
    with store.engine.connect() as db:
        row = db.execute(sa.select(matches).where(matches.c.id == match)).first()
        if row is None or row.status not in _SETTLED:
            return None
        played = db.execute(
            sa.select(games.c.deal, games.c.rotation, games.c.history)
            .where(games.c.match_id == match)
            .order_by(games.c.deal, games.c.rotation)
        ).all()
        stored = _stored(row, [])
        reference = stored.field()
        fields: Sequence[Any] = []
        if reference is not None:
            fields = db.execute(
                sa.select(baselines.c.deal, baselines.c.history)
                .where(
                    baselines.c.field == reference[1],
                    baselines.c.players == stored.players,
                    baselines.c.seed == stored.seed,
                    baselines.c.deal.in_(sorted({int(g[0]) for g in played})),
                )
                .order_by(baselines.c.deal)
            ).all()
    return {
        "match": match,
        "status": row.status,
        "seats": [public_label(s) for s in stored.seats],
        "seed": stored.seed,
        "games": [{"deal": int(k), "rotation": int(r), "history": json.loads(h)} for k, r, h in played],
        "all_field": [{"deal": int(k), "history": json.loads(h)} for k, h in fields],
    }


def game_history(store: Store, match: str, deal: int, rotation: int) -> dict[str, Any] | None:
    """One game's hand history (``docs/hand_history.md``) of a settled match, or None."""
    with store.engine.connect() as db:
        row = db.execute(
            sa.select(games.c.history)
            .join(matches, matches.c.id == games.c.match_id)
            .where(
                games.c.match_id == match,
                games.c.deal == deal,
                games.c.rotation == rotation,
                matches.c.status.in_(_SETTLED),
            )
        ).first()
    return None if row is None else dict(json.loads(row[0]))
