"""Which server process holds each bot's one live connection: the ``bot_connections`` table
(``train.arena.storage``), so that a bot is connected to one of the servers of a database at a time, however many
servers or ``--processes`` children share it, and so plays one match at a time.

A server takes a bot's hold when the bot connects (``take``), and lets go of it once the connection has ended
(``drop``); the server serializes both per bot (``train.arena.server``). A hold of a server that is gone (its
liveness lock free: a killed process) is taken over by the next server the bot connects to.
"""

from __future__ import annotations

import time

import sqlalchemy as sa

from train.arena.storage import Store, bot_connections

__all__ = ["drop", "take"]


def take(store: Store, name: str) -> str | None:
    """Hold bot ``name``'s one live connection for ``store``'s server: None once it holds it, else the id of the live
    server that holds it (the bot is connected there). This server's own hold is kept (its registry keeps one
    connection per bot in the process)."""
    store.hold()

    def work() -> str | None:
        with store.engine.begin() as db:
            # the insert first: on SQLite it takes the write lock, so that no other server writes between the read
            # and the update below; on PostgreSQL it waits for another server's insert of the same bot
            row = {"name": name, "server": store.server_id, "since": time.time()}
            db.execute(store.insert_or_keep(bot_connections), row)
            holder = db.execute(sa.select(bot_connections.c.server).where(bot_connections.c.name == name)).scalar()
            if holder is None or holder == store.server_id:
                return None
            if not store.server_gone(db, holder):
                return str(holder)
            taken = sa.and_(bot_connections.c.name == name, bot_connections.c.server == holder)
            update = sa.update(bot_connections).where(taken).values(server=store.server_id, since=time.time())
            if db.execute(update).rowcount:
                return None
            # another server took it over first (on PostgreSQL, its update went before this one)
            return str(db.execute(sa.select(bot_connections.c.server).where(bot_connections.c.name == name)).scalar())

    return store.read(work)


def drop(store: Store, name: str) -> None:
    """Let go of bot ``name``'s hold, if ``store``'s server has it."""

    def work() -> None:
        with store.engine.begin() as db:
            mine = sa.and_(bot_connections.c.name == name, bot_connections.c.server == store.server_id)
            db.execute(sa.delete(bot_connections).where(mine))

    store.read(work)
