"""Alembic's environment: the connection comes from ``train.arena.storage.migrate``, never from a file."""

from alembic import context

from train.arena.storage import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
