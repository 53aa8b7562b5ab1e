"""The store: engines for one database URL, migrations, and a health probe."""

from __future__ import annotations

import ast
import logging
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from model.errors import ConfigError
from storage import sqlite

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).parent / "migrations"
# Any constant works; it only has to be the same in every collector process.
_PG_MIGRATION_LOCK = 7_274_661


class StoreClosed(RuntimeError):
    """A connection asked of a store after close(): the collector is stopping."""


def normalise_url(url: str) -> str:
    """Accept the URL forms people paste: postgres:// and postgresql:// mean psycopg 3."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def head_revision() -> str | None:
    """The newest migration's revision, read from the files' `revision` and
    `down_revision` assignments (as Alembic reads them, but without importing Alembic
    or the migrations); None unless exactly one revision is nobody's parent."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if not (isinstance(node, ast.Assign | ast.AnnAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if not names & {"revision", "down_revision"} or node.value is None:
                continue
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            values = value if isinstance(value, tuple | list) else [value]
            (revisions if "revision" in names else parents).update(
                v for v in values if isinstance(v, str))
    heads = revisions - parents
    return next(iter(heads)) if len(heads) == 1 else None


class Store:
    """Two engines on one database: `writer` for the exporter and migrations, `reader`
    for everything that only reads. On SQLite the writer starts its transactions with
    BEGIN IMMEDIATE, so that two writers queue on the lock instead of failing on a
    lock upgrade, and the reader never takes the write lock."""

    def __init__(self, url: str, sqlite_synchronous: str = "NORMAL",
                 sqlite_wal_max_bytes: int = 256 * 1024 * 1024) -> None:
        self.url = normalise_url(url)
        # SQLite only: the size past which the writer process empties the write-ahead
        # log (exporters/sql/checkpoint.py); 0 leaves it unbounded.
        self.sqlite_wal_max_bytes = sqlite_wal_max_bytes
        try:
            parsed = make_url(self.url)
        except Exception as exc:
            raise ConfigError(f"storage.url is not a database URL: {exc}") from exc
        self.dialect = parsed.get_backend_name()
        self.closed = False
        if self.dialect not in ("sqlite", "postgresql"):
            raise ConfigError(f"unsupported database {self.dialect!r}: use sqlite or postgresql")
        if self.dialect == "sqlite":
            if str(sqlite_synchronous).upper() not in sqlite.SYNCHRONOUS:
                raise ConfigError("storage.sqlite_synchronous must be NORMAL, FULL or EXTRA")
            database = parsed.database or ""
            if database and database != ":memory:":
                Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self.writer = self._sqlite_engine(immediate=True, synchronous=sqlite_synchronous)
            self.reader = self._sqlite_engine(immediate=False, synchronous=sqlite_synchronous)
        else:
            options: dict[str, Any] = {
                "pool_pre_ping": True,
                "pool_size": 4,
                "max_overflow": 4,
                "connect_args": {"connect_timeout": 3},
            }
            self.writer = create_engine(self.url, **options)
            # Reads in autocommit, on the writer's pool: READ COMMITTED gives every
            # statement its own snapshot in a transaction too, so a read sees nothing
            # different, and a page's many small reads save the BEGIN and ROLLBACK round
            # trips of each connection (the deploys page makes about 40).
            self.reader = self.writer.execution_options(isolation_level="AUTOCOMMIT")
        for engine in {id(self.writer): self.writer, id(self.reader): self.reader}.values():
            self._refuse_when_closed(engine)

    def _sqlite_engine(self, immediate: bool, synchronous: str) -> Engine:
        # The reader keeps a pool: opening a connection and setting its pragmas was half
        # of a trace page (4.4 ms without, 2.0 ms with). The writer opens one per group
        # commit, cheap next to the commit, and so notices at once when the file is gone.
        pool: dict[str, Any] = {"poolclass": NullPool} if immediate else {"pool_size": 4}
        engine = create_engine(self.url, **pool,
                               connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            # Take transaction control away from the sqlite3 module so BEGIN is ours.
            dbapi_connection.isolation_level = None
            sqlite.apply_pragmas(dbapi_connection, synchronous)

        @event.listens_for(engine, "begin")
        def _on_begin(connection: Any) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine

    def upgrade(self) -> None:
        """Apply every pending Alembic migration; safe to run from several processes.
        A database already at the newest revision is left without importing Alembic
        (with Mako and Pygments, 11 MB that a running collector would keep and never
        use again)."""
        if self.at_head():
            return
        # Here: see above.
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.writer.connect() as connection:
            if self.dialect == "postgresql":
                connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
                connection.commit()
            try:
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
                connection.commit()
            finally:
                if self.dialect == "postgresql":
                    connection.execute(text("SELECT pg_advisory_unlock(:k)"),
                                       {"k": _PG_MIGRATION_LOCK})
                    connection.commit()

    def at_head(self) -> bool:
        """Whether the database is at the newest migration: False when it cannot tell
        (no alembic_version table yet, or the migrations have no single head), and
        Alembic decides."""
        head = head_revision()
        if head is None:
            return False
        try:
            with self.reader.connect() as connection:
                stamped = [row[0] for row in connection.execute(
                    text("SELECT version_num FROM alembic_version"))]
        except Exception:  # noqa: BLE001 - a new database: Alembic creates the table
            return False
        return stamped == [head]

    def ping(self) -> bool:
        """Whether the database answers, on a connection like the writer's (a fresh one
        on SQLite). Below SQLAlchemy's transaction events, so it takes no lock."""
        try:
            connection = self.writer.raw_connection()
        except Exception:  # noqa: BLE001 - the pool raises the driver's own errors here
            return False
        try:
            cursor = connection.cursor()
            cursor.execute("SELECT 1")
            cursor.close()
            return True
        except Exception:  # noqa: BLE001 - any driver error means "not reachable"
            return False
        finally:
            connection.close()

    def dispose(self) -> None:
        """Close the pooled connections; the store stays usable (a use reconnects)."""
        self.writer.dispose()
        if self.reader is not self.writer:
            self.reader.dispose()

    def close(self) -> None:
        """Dispose and refuse new connections until reopen(). A call still running in
        a thread when its task was cancelled at shutdown (an alerts turn, a page) would
        otherwise open a new connection after the store was disposed, and on SQLite
        wait up to the busy timeout (30 s) for a lock while the file is being closed:
        the process then could not exit (seen in CI). Closed, it fails at once."""
        self.closed = True
        self.dispose()

    def reopen(self) -> None:
        self.closed = False

    def _refuse_when_closed(self, engine: Engine) -> None:
        # Before the driver connects: nothing is opened for a closed store.
        @event.listens_for(engine, "do_connect")
        def _check_open(*_args: Any) -> None:
            if self.closed:
                raise StoreClosed("the store is closed: the collector is stopping")
