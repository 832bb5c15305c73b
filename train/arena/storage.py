"""The arena's database: bots (token hashes), matches and every finished game, through SQLAlchemy 2.0 Core.

SQLite by default, one file under the data folder (``arena.sqlite3``); another URL (PostgreSQL) goes through the same
tables. The schema is under Alembic migrations (``train/arena/migrations``), applied when a ``Store`` opens. Every
game is committed in its own transaction as it ends, so a server killed mid-match loses no finished game; on the next
start its matches still marked ``running`` are marked ``interrupted``.

Tokens are 32 random bytes (``secrets.token_urlsafe``), shown once; only their SHA-256 is stored (a token is random,
not a password: a slow hash would add nothing), and a presented token is compared with ``hmac.compare_digest``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

__all__ = ["DB_FILE", "Store", "metadata"]

DB_FILE = "arena.sqlite3"

metadata = sa.MetaData()
bots = sa.Table(
    "bots",
    metadata,
    sa.Column("name", sa.String(32), primary_key=True),
    sa.Column("token_sha256", sa.String(64), nullable=False),
    sa.Column("created", sa.Float, nullable=False),
)
matches = sa.Table(
    "matches",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("created", sa.Float, nullable=False),
    sa.Column("request", sa.Text, nullable=False),  # the match spec, JSON
    sa.Column("status", sa.String(16), nullable=False),  # running, finished, aborted, interrupted
    sa.Column("report", sa.Text, nullable=True),  # MatchReport.to_dict(), JSON
)
games = sa.Table(
    "games",
    metadata,
    sa.Column("match_id", sa.String(32), sa.ForeignKey("matches.id"), primary_key=True),
    sa.Column("deal", sa.Integer, primary_key=True),
    sa.Column("rotation", sa.Integer, primary_key=True),
    sa.Column("outcomes", sa.Text, nullable=False),  # seat_outcomes rows, JSON
    sa.Column("history", sa.Text, nullable=False),  # the hand history, JSON (docs/hand_history.md)
)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Store:
    """The database at ``url``, or ``sqlite:///{folder}/arena.sqlite3``; migrated to the newest schema on opening."""

    def __init__(self, folder: str | Path | None = None, url: str | None = None) -> None:
        if url is None:
            if folder is None:
                raise ValueError("Store: a data folder or a database URL")
            Path(folder).mkdir(parents=True, exist_ok=True)
            url = f"sqlite:///{Path(folder) / DB_FILE}"
        self.engine = sa.create_engine(url)
        migrate(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------------ bots
    def add_bot(self, name: str) -> str:
        """A new bot's token (shown once); ``ValueError`` if the name is taken."""
        token = secrets.token_urlsafe(32)
        with self.engine.begin() as db:
            if db.execute(sa.select(bots.c.name).where(bots.c.name == name)).first() is not None:
                raise ValueError(f"bot {name!r} exists already")
            db.execute(sa.insert(bots).values(name=name, token_sha256=_digest(token), created=time.time()))
        return token

    def check_token(self, name: str, token: str) -> bool:
        with self.engine.connect() as db:
            row = db.execute(sa.select(bots.c.token_sha256).where(bots.c.name == name)).first()
        # an unknown name is compared too, so the answer takes as long whether the name exists or not
        return hmac.compare_digest(row[0] if row is not None else "0" * 64, _digest(token)) and row is not None

    # ------------------------------------------------------------------------ matches
    def start_match(self, match: str, request: dict[str, Any]) -> None:
        with self.engine.begin() as db:
            db.execute(
                sa.insert(matches).values(id=match, created=time.time(), request=json.dumps(request), status="running")
            )

    def game_finished(self, match: str, deal: int, rotation: int, outcomes: Any, history: dict[str, Any]) -> None:
        with self.engine.begin() as db:
            db.execute(
                sa.insert(games).values(
                    match_id=match,
                    deal=deal,
                    rotation=rotation,
                    outcomes=json.dumps(outcomes.tolist()),
                    history=json.dumps(history, separators=(",", ":")),
                )
            )

    def finish_match(self, match: str, status: str, report: dict[str, Any] | None) -> None:
        with self.engine.begin() as db:
            db.execute(
                sa.update(matches)
                .where(matches.c.id == match)
                .values(status=status, report=None if report is None else json.dumps(report))
            )

    def mark_interrupted(self) -> int:
        """Matches left ``running`` by a server that stopped without finishing them; their count."""
        with self.engine.begin() as db:
            result = db.execute(sa.update(matches).where(matches.c.status == "running").values(status="interrupted"))
            return int(result.rowcount)

    def match(self, match: str) -> dict[str, Any] | None:
        with self.engine.connect() as db:
            row = db.execute(sa.select(matches).where(matches.c.id == match)).mappings().first()
            if row is None:
                return None
            count = db.execute(sa.select(sa.func.count()).select_from(games).where(games.c.match_id == match))
            return {**dict(row), "games": int(count.scalar_one())}

    def games(self, match: str) -> list[dict[str, Any]]:
        with self.engine.connect() as db:
            rows = db.execute(
                sa.select(games).where(games.c.match_id == match).order_by(games.c.deal, games.c.rotation)
            ).mappings()
            return [
                {**dict(r), "outcomes": json.loads(r["outcomes"]), "history": json.loads(r["history"])} for r in rows
            ]


def migrate(engine: sa.Engine) -> None:
    """Apply the Alembic migrations up to the newest (``train/arena/migrations``)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
