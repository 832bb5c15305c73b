"""The ladder's all-field tables: each reference field's game on a deal, the par of a bot's replacement advantage.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "baselines",
        sa.Column("field", sa.String(200), primary_key=True),
        sa.Column("players", sa.Integer, primary_key=True),
        sa.Column("seed", sa.BigInteger, primary_key=True),
        sa.Column("deal", sa.Integer, primary_key=True),
        sa.Column("outcomes", sa.Text, nullable=False),
        sa.Column("history", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("baselines")
