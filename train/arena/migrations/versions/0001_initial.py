"""The first schema: bots, matches, games.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "bots",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("token_sha256", sa.String(64), nullable=False),
        sa.Column("created", sa.Float, nullable=False),
    )
    op.create_table(
        "matches",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("request", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("report", sa.Text, nullable=True),
    )
    op.create_table(
        "games",
        sa.Column("match_id", sa.String(32), sa.ForeignKey("matches.id"), primary_key=True),
        sa.Column("deal", sa.Integer, primary_key=True),
        sa.Column("rotation", sa.Integer, primary_key=True),
        sa.Column("outcomes", sa.Text, nullable=False),
        sa.Column("history", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("games")
    op.drop_table("matches")
    op.drop_table("bots")
