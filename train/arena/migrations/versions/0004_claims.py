"""Claims: which server took a match (``Store.claim_match``) and when, and the index its search for the oldest
pending match uses.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:  # SQLite alters a table by copying it; PostgreSQL in place
        batch.add_column(sa.Column("server", sa.String(64), nullable=True))
        batch.add_column(sa.Column("claimed", sa.Float, nullable=True))
    op.create_index("ix_matches_status_created", "matches", ["status", "created"])


def downgrade() -> None:
    op.drop_index("ix_matches_status_created", table_name="matches")
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("claimed")
        batch.drop_column("server")
