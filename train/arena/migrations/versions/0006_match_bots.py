"""Match bots: which remote bots sat in each match, so that a bot's page reads its newest matches from an index
instead of searching every match's request (a page's cost grew with the whole arena's history, whoever asked).
Filled here from the matches already stored.

Revision ID: 0006
Revises: 0005
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"

_BATCH = 5000  # matches read per query while filling the table: memory stays bounded on a long history


def upgrade() -> None:
    op.create_table(
        "match_bots",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("match_id", sa.String(32), sa.ForeignKey("matches.id"), primary_key=True),
        sa.Column("created", sa.Float, nullable=False),
    )
    op.create_index("ix_match_bots_name_created", "match_bots", ["name", "created", "match_id"])
    # the tables as this revision knows them (not the application's, which later revisions may change)
    matches = sa.table("matches", sa.column("id"), sa.column("created"), sa.column("request"))
    match_bots = sa.table("match_bots", sa.column("name"), sa.column("match_id"), sa.column("created"))
    db = op.get_bind()
    after = ""
    while True:
        rows = db.execute(
            sa.select(matches.c.id, matches.c.created, matches.c.request)
            .where(matches.c.id > after)
            .order_by(matches.c.id)
            .limit(_BATCH)
        ).all()
        if not rows:
            return
        seated = []
        for match_id, created, request in rows:
            try:
                seats = json.loads(request)["seats"]
            except (ValueError, KeyError, TypeError):  # not a request this code wrote: no bot to list
                continue
            names = {
                seat[4:] for seat in seats if isinstance(seat, str) and seat.startswith("bot:") and len(seat) <= 36
            }
            seated += [{"name": name, "match_id": match_id, "created": created} for name in sorted(names)]
        if seated:
            db.execute(sa.insert(match_bots), seated)
        after = rows[-1][0]


def downgrade() -> None:
    op.drop_index("ix_match_bots_name_created", table_name="match_bots")
    op.drop_table("match_bots")
