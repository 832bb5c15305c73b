"""Servers' heartbeats: on PostgreSQL a server is judged gone only when its liveness lock is free and its heartbeat
is older than the grace period, so that a dropped database session of a live server is never taken for its death
(``train.arena.storage``).

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    op.create_table(
        "servers",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("beat", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("servers")
