"""The arena's schema: the tables of its database (SQLAlchemy Core, for SQLite and PostgreSQL alike) and the
migrations that make them (``train/arena/migrations``, Alembic), apart from ``train.arena.storage``'s use of them.

=================== ==================================================================================================
table               what a row is
=================== ==================================================================================================
``bots``            a bot: its name and the SHA-256 of its token
``operators``       an operator: its name and the SHA-256 of its token
``matches``         a match: its request (JSON), status, report, and the server that plays it
``games``           a finished game of a match: its outcome rows and hand history
``match_bots``      which bots sat in a match (a bot's page reads its newest)
``bot_connections`` which server process holds each bot's one live connection (``train.arena.holds``)
``servers``         a live server's heartbeat on PostgreSQL (``train.arena.storage``: leases beside the liveness lock)
``baselines``       the all-field tables and par games (defined with their queries, ``train.arena.records``)
=================== ==================================================================================================
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa

__all__ = [
    "NewerDatabaseError",
    "alembic_config",
    "bot_connections",
    "bots",
    "games",
    "match_bots",
    "matches",
    "metadata",
    "migrate",
    "operators",
    "servers",
]

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
    sa.Column("status", sa.String(16), nullable=False),  # pending, running, finished, aborted, interrupted, refused
    sa.Column("report", sa.Text, nullable=True),  # MatchReport.to_dict(), JSON
    sa.Column("server", sa.String(64), nullable=True),  # the server that claimed it (claim_match)
    sa.Column("claimed", sa.Float, nullable=True),  # when
    sa.Index("ix_matches_status_created", "status", "created"),
)
operators = sa.Table(
    "operators",
    metadata,
    sa.Column("name", sa.String(32), primary_key=True),
    sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
    sa.Column("created", sa.Float, nullable=False),
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
match_bots = sa.Table(  # which bots sat in a match, written with it: a bot's page reads its newest, not every match
    "match_bots",
    metadata,
    sa.Column("name", sa.String(32), primary_key=True),
    sa.Column("match_id", sa.String(32), sa.ForeignKey("matches.id"), primary_key=True),
    sa.Column("created", sa.Float, nullable=False),  # the match's
    sa.Index("ix_match_bots_name_created", "name", "created", "match_id"),
)
bot_connections = sa.Table(
    "bot_connections",
    metadata,
    sa.Column("name", sa.String(32), primary_key=True),
    sa.Column("server", sa.String(64), nullable=False),  # the server process the bot is connected to
    sa.Column("since", sa.Float, nullable=False),
)
servers = sa.Table(  # PostgreSQL: each live server's heartbeat, in the database's clock (train.arena.storage)
    "servers",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("beat", sa.Float, nullable=False),  # seconds since the epoch, the database's now() at the last beat
)

_MIGRATION_LOCK = 0x626F75727265  # "bourre": the PostgreSQL advisory lock that servers starting at once migrate under


class NewerDatabaseError(ValueError):
    """A database whose schema is at a revision these migrations do not know (a newer version migrated it)."""


def migrate(engine: sa.Engine, revision: str = "head") -> None:
    """Apply the Alembic migrations up to ``revision``, the newest by default (``train/arena/migrations``). On
    PostgreSQL under an advisory lock: servers that start at once migrate one after the other (the schema's changes
    are transactional there, so the second finds it done). ``NewerDatabaseError`` (one line) for a database at a
    revision these migrations do not know."""
    from alembic import command
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
        config = alembic_config(connection)
        scripts = ScriptDirectory.from_config(config)
        known = {script.revision for script in scripts.walk_revisions()}
        current = MigrationContext.configure(connection).get_current_heads()
        unknown = [r for r in current if r not in known]
        if unknown:  # Alembic would fail with a traceback of its own: say what is wrong, in one line
            raise NewerDatabaseError(
                f"its schema is at revision {', '.join(unknown)}, which this bourre-rl does not know (its newest is "
                f"{scripts.get_current_head()}): a newer version made it; run that version, or use another database"
            )
        command.upgrade(config, revision)


def alembic_config(connection: sa.Connection | None = None) -> Any:
    """Alembic's configuration for the arena's migrations, on ``connection`` (for ``alembic.command``; without one,
    for reading the scripts only)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    config.attributes["connection"] = connection
    return config
