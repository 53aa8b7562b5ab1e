"""Alembic run by the tests, as `sounding db upgrade` runs it: on one of the store's
connections, to a chosen revision, so a test can stand a database at any step."""

from __future__ import annotations

from collections.abc import Callable

from alembic.config import Config

from storage.store import MIGRATIONS, Store


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def migrate(store: Store, step: Callable[[Config, str], None], revision: str) -> None:
    """`step` (alembic's command.upgrade or command.downgrade) to `revision`, committed."""
    config = alembic_config()
    with store.writer.connect() as conn:
        config.attributes["connection"] = conn
        step(config, revision)
        conn.commit()
