"""Alembic environment: runs on the connection that Store.upgrade passes in."""

from alembic import context

from storage.partitions import include_name
from storage.schema import metadata

connection = context.config.attributes["connection"]
# The day partitions of PostgreSQL are tables Alembic would otherwise offer to drop.
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True,
                  include_name=include_name)
with context.begin_transaction():
    context.run_migrations()
