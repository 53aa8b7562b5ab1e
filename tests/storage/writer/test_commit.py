"""The writer's inserts (storage/writer/commit.py): SQLite's span and log inserts take
the values the writer adds as literals of their statement (LiteralInserts), and a
commit of several projects' batches stores each row under its own project, with the
commit's time received, on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlalchemy as sa

from model.records import Batch, LogRecord, Span
from storage import keys
from storage.store import Store
from storage.wire.batch import write_batches
from storage.writer.commit import LiteralInserts, insert_sql

RESOURCE = {"service.name": "shop"}


def test_insert_sql_writes_integer_literals_in_their_columns() -> None:
    assert insert_sql("sqlite", "t", ("project_id", "a", "received_us"), "ON CONFLICT DO NOTHING",
                      {"project_id": 7, "received_us": 12}) == (
        'INSERT INTO "t" ("project_id", "a", "received_us") VALUES (7, ?, 12) '
        "ON CONFLICT DO NOTHING")
    assert insert_sql("postgresql", "t", ("a", "b")) == 'INSERT INTO "t" ("a", "b") VALUES (%s, %s)'


def test_literal_inserts_remember_a_statement_per_project_and_time() -> None:
    inserts = LiteralInserts("sqlite", "logs", ("project_id", "a", "received_us"), "")
    first = inserts.of(3, 100)
    assert first == 'INSERT INTO "logs" ("project_id", "a", "received_us") VALUES (3, ?, 100)'
    assert inserts.of(3, 100) is first
    assert inserts.of(4, 100).endswith("VALUES (4, ?, 100)")
    for n in range(LiteralInserts.KEEP + 1):  # a bounded memo
        inserts.of(5, n)
    assert len(inserts._sql) <= LiteralInserts.KEEP


def _span(span_id: str) -> Span:
    return Span("ab" * 16, span_id, "", "GET /", 2, 1_795_168_800_000_000_000,
                1_795_168_800_100_000_000, 0, "", "shop", "scope", RESOURCE)


def _log(time_ns: int) -> LogRecord:
    return LogRecord(time_ns, time_ns, 9, "INFO", "", "", 0, "", "shop", "scope", RESOURCE,
                     body="hello")


def test_a_commit_stores_each_batch_under_its_project(store: Store) -> None:
    with store.writer.begin() as conn:
        one, two = keys.ensure_project(conn, "one"), keys.ensure_project(conn, "two")
    with store.writer.begin() as conn:
        write_batches(conn, [
            Batch(one, spans=[_span("01" * 8), _span("02" * 8)], logs=[_log(1)]),
            Batch(two, spans=[_span("03" * 8)], logs=[_log(2), _log(3)]),
        ], 123_456)
    with store.reader.connect() as conn:
        spans = conn.execute(sa.text(
            "SELECT project_id, count(*) FROM spans GROUP BY project_id ORDER BY 1")).all()
        logs = conn.execute(sa.text(
            "SELECT project_id, count(*), min(received_us), max(received_us) FROM logs "
            "GROUP BY project_id ORDER BY 1")).all()
    assert [tuple(r) for r in spans] == [(one, 2), (two, 1)]
    assert [tuple(r) for r in logs] == [(one, 1, 123_456, 123_456), (two, 2, 123_456, 123_456)]
