"""Bot connections: which server process holds each bot's one live connection, so that a bot connects to one of
several servers on one database (or of the children of ``--processes N``) at a time (``train.arena.holds``).

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "bot_connections",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("server", sa.String(64), nullable=False),
        sa.Column("since", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("bot_connections")
