"""Writing batches: what one group commit does inside its one transaction.

Batches reach the writer in a compact wire form (storage/wire.py): plain tuples,
cheap to pickle across to the writer process and cheap to turn into rows. Rows go
to the database driver's `executemany` with SQL prepared once per dialect; the
ORM-level statement machinery would cost more per row than SQLite's insert.

Every statement is an insert or an atomic upsert (`count = count + n`), never a
read-modify-write, so several collector processes can write one database and the
counts stay exact. Keys are written in sorted order so that two PostgreSQL
transactions touching the same groups lock them in the same order and cannot
deadlock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storage.writer_groups import write_groups, write_requests

# The wire form of one batch (storage/wire.py's encode_batch builds it).
WireBatch = tuple[int, list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]],
                  list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[str, int]],
                  list[tuple[int, str]]]

# Table and column names as storage/schema.py defines them (tests/exporters/
# test_sql_writer.py checks). Spelled out so that the writer process does not
# import SQLAlchemy: that alone would double its memory.
SPANS, RESOURCES, ERROR_EVENTS, DEPLOYS = "spans", "resources", "error_events", "deploys"
SPAN_COLUMNS = ("project_id", "trace_id", "span_id", "parent_span_id", "name", "kind",
                "start_ns", "end_ns", "status_code", "status_message", "service_name",
                "scope_name", "category", "resource_id", "body")
RESOURCE_COLUMNS = ("id", "project_id", "attributes")
ERROR_COLUMNS = ("project_id", "fingerprint", "ts_us", "received_us", "exception_class",
                 "message", "backtrace", "params", "source_context", "request_id", "user_id",
                 "trace_id", "span_id")
DEPLOY_COLUMNS = ("project_id", "git_sha", "version", "env", "deployer", "description",
                  "ts_us", "received_us")


def placeholders(dialect: str, n: int) -> str:
    mark = "%s" if dialect == "postgresql" else "?"
    return ", ".join([mark] * n)


def insert_sql(dialect: str, table: str, columns: Sequence[str], suffix: str = "") -> str:
    names = ", ".join(f'"{c}"' for c in columns)
    return (f'INSERT INTO "{table}" ({names}) VALUES ({placeholders(dialect, len(columns))})'
            + (f" {suffix}" if suffix else ""))


class BatchWriter:
    """Writes wire batches through a DBAPI cursor; SQL prepared once per dialect."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        # A retried batch that was committed already must not duplicate its spans.
        self.spans_sql = insert_sql(dialect, SPANS, SPAN_COLUMNS,
                                    "ON CONFLICT DO NOTHING")
        self.resources_sql = insert_sql(dialect, RESOURCES, RESOURCE_COLUMNS,
                                        "ON CONFLICT DO NOTHING")
        self.errors_sql = insert_sql(dialect, ERROR_EVENTS, ERROR_COLUMNS)
        self.deploys_sql = insert_sql(dialect, DEPLOYS, DEPLOY_COLUMNS)

    def write(self, cursor: Any, batches: Sequence[WireBatch], received_us: int) -> None:
        self._spans(cursor, batches)
        self._errors(cursor, batches, received_us)
        write_groups(cursor, self.dialect, batches)
        self._deploys(cursor, batches, received_us)
        write_requests(cursor, self.dialect, batches)

    def _spans(self, cursor: Any, batches: Sequence[WireBatch]) -> None:
        resources = {(r_id, batch[0], text) for batch in batches for r_id, text in batch[7]}
        if resources:
            cursor.executemany(self.resources_sql, sorted(resources))
        rows = [(batch[0], *span) for batch in batches for span in batch[1]]
        if rows:
            cursor.executemany(self.spans_sql, rows)

    def _errors(self, cursor: Any, batches: Sequence[WireBatch], received_us: int) -> None:
        rows = [(batch[0], fingerprint, ts_us, received_us, *rest)
                for batch in batches
                for (fingerprint, ts_us, *rest) in batch[2]]
        if rows:
            cursor.executemany(self.errors_sql, rows)

    def _deploys(self, cursor: Any, batches: Sequence[WireBatch], received_us: int) -> None:
        rows = [(batch[0], *deploy, received_us) for batch in batches for deploy in batch[3]]
        if rows:
            cursor.executemany(self.deploys_sql, rows)
