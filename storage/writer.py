"""Writing batches: what one group commit does inside its one transaction.

Batches reach the writer in a compact wire form (`encode_batch`): plain tuples,
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

from sounding.records import Batch
from storage.jsontext import dumps
from storage.writer_groups import write_groups, write_requests

# The wire form of one batch (see encode_batch for the tuple layouts).
WireBatch = tuple[int, list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]],
                  list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[str, int]]]

# Table and column names as storage/schema.py defines them (tests/exporters/
# test_sql_writer.py checks). Spelled out so that the writer process does not
# import SQLAlchemy: that alone would double its memory.
SPANS, ERROR_EVENTS, DEPLOYS = "spans", "error_events", "deploys"
SPAN_COLUMNS = ("project_id", "trace_id", "span_id", "parent_span_id", "name", "kind",
                "start_ns", "end_ns", "status_code", "status_message", "service_name",
                "scope_name", "category", "resource_attributes", "attributes", "semantic",
                "events")
ERROR_COLUMNS = ("project_id", "fingerprint", "ts_us", "received_us", "exception_class",
                 "message", "backtrace", "params", "source_context", "request_id", "user_id",
                 "trace_id", "span_id")
DEPLOY_COLUMNS = ("project_id", "git_sha", "version", "env", "deployer", "description",
                  "ts_us", "received_us")


def encode_batch(batch: Batch) -> WireBatch:
    """The batch as tuples of plain values, JSON columns already serialised, in the
    order the writer binds them. Text pickles and unpickles far cheaper than the
    dictionaries it came from, so this is also the cheapest form to hand over."""
    resources: dict[int, str] = {}  # one resource is shared by many spans: serialise it once
    spans = []
    for s in batch.spans:
        resource = resources.get(id(s.resource_attributes))
        if resource is None:
            resource = resources[id(s.resource_attributes)] = dumps(s.resource_attributes)
        spans.append((s.trace_id, s.span_id, s.parent_span_id, s.name, s.kind, s.start_ns,
                      s.end_ns, s.status_code, s.status_message, s.service_name, s.scope_name,
                      s.category or "custom", resource, dumps(s.attributes), dumps(s.semantic),
                      dumps(s.events) if s.events else "[]"))
    errors = []
    for e in batch.errors:
        sc = e.source_context
        errors.append((e.fingerprint, e.ts_us, e.exception_class, e.message, dumps(e.backtrace),
                       None if e.params is None else dumps(e.params),
                       None if sc is None else dumps({
                           "file": sc.file, "lineno": sc.lineno, "context_line": sc.context_line,
                           "pre_context": sc.pre_context, "post_context": sc.post_context}),
                       e.request_id, e.user_id, e.trace_id, e.span_id))
    deploys = [(d.git_sha, d.version, d.env, d.deployer, d.description, d.ts_us)
               for d in batch.deploys]
    requests = [(r.service, r.env, r.method, r.route, r.ts_us, r.status, r.duration_ms)
                for r in batch.requests]
    groups = [(g.fingerprint, g.exception_class, g.message, g.count, g.first_seen_us,
               g.last_seen_us, g.hourly) for g in batch.groups.values()]
    return (batch.project_id, spans, errors, deploys, requests, groups,
            list(batch.reopen_after.items()))


def wire_records(wire: WireBatch) -> dict[str, int]:
    """Records per signal in a wire batch, for the accepted/refused counters."""
    return {"spans": len(wire[1]), "errors": len(wire[2]), "deploys": len(wire[3]),
            "requests": len(wire[4])}


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
        self.errors_sql = insert_sql(dialect, ERROR_EVENTS, ERROR_COLUMNS)
        self.deploys_sql = insert_sql(dialect, DEPLOYS, DEPLOY_COLUMNS)

    def write(self, cursor: Any, batches: Sequence[WireBatch], received_us: int) -> None:
        self._spans(cursor, batches)
        self._errors(cursor, batches, received_us)
        write_groups(cursor, self.dialect, batches)
        self._deploys(cursor, batches, received_us)
        write_requests(cursor, self.dialect, batches)

    def _spans(self, cursor: Any, batches: Sequence[WireBatch]) -> None:
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


def write_batches(conn: Any, batches: Sequence[Batch], received_us: int) -> None:
    """Write record batches inside an open SQLAlchemy transaction (tools and tests)."""
    cursor = conn.connection.cursor()
    try:
        BatchWriter(conn.dialect.name).write(cursor, [encode_batch(b) for b in batches],
                                             received_us)
    finally:
        cursor.close()
