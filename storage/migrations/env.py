"""Alembic environment: runs on the connection that Store.upgrade passes in."""

from alembic import context

from storage.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
