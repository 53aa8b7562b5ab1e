"""Migration 0031 (storage/migrations/versions/0031_log_attributes_in_body.py) on SQLite
and PostgreSQL: records stored at 0032 (the revision before 0031), with their
attributes as a JSON column too, read back and are found by attribute after the
column is dropped; downgrading fills the column again from the bodies."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import command
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from model.records import Batch, LogRecord
from storage import keys, rows
from storage.queries import logs as lq
from storage.store import Store
from storage.wire.batch import encode_batch
from tests.storage.test_logs import message, record
from tests.support.migrations import migrate

OLD_COLUMNS = (*rows.LOGS.names[:-1], "attributes", "body")


def _old_rows(project: int, records: list[LogRecord], attributes: list[dict[str, Any]]
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Resources and logs rows as the writer before 0031 stored them."""
    wire = encode_batch(Batch(project, logs=records))
    resources = [{"id": rid, "project_id": project, "attributes": json.loads(text)}
                 for rid, text in wire.resources]
    logs = [{"project_id": project, "received_us": 1,
             **dict(zip(OLD_COLUMNS, (*row[:-1], attrs, row[-1]), strict=True))}
            for row, attrs in zip(wire.logs, attributes, strict=True)]
    return resources, logs


def _logs_table(*names: str) -> sa.TableClause:
    return sa.table("logs", *(sa.column(c, sa.JSON()) if c == "attributes" else sa.column(c)
                              for c in names))


def test_records_stored_before_0031_read_and_are_searched_after_the_column_goes(empty_db_url: str
                                                                     ) -> None:
    store = Store(empty_db_url)
    migrate(store, command.upgrade, "0032")
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "old")
    nul = message(time=7)
    nul.attributes.add(key="k", value=AnyValue(string_value="a\x00b"))
    records = [record(message()), record(nul)]
    old_attributes = [{"user.id": 42, "raw": "AAE="},
                      {"user.id": 42, "raw": "AAE=", "k": "a\ufffdb"}]
    resources, logs = _old_rows(project, records, old_attributes)
    with store.writer.begin() as conn:
        conn.execute(sa.table("resources", sa.column("id"), sa.column("project_id"),
                              sa.column("attributes", sa.JSON())).insert(), resources)
        conn.execute(_logs_table("project_id", *OLD_COLUMNS, "received_us").insert(), logs)
        before = lq.log_rows(conn, conn.execute(
            sa.select(*(sa.column(c.name) for c in lq.COLUMNS)).select_from(sa.table("logs"))
            .order_by(sa.column("time_ns"))).all())

    migrate(store, command.upgrade, "head")
    with store.reader.connect() as conn:
        columns = [c["name"] for c in sa.inspect(conn).get_columns("logs")]
    assert "attributes" not in columns
    page = lq.search(store, project, lq.LogFilter())
    assert sorted(page.items, key=lambda i: i["time_ns"]) == before
    assert before[0]["attributes"] == {"user.id": 42, "raw": "AAE=", "k": "a\x00b"}
    found = lq.search(store, project, lq.LogFilter(attributes=(("user.id", "42"),)))
    assert found.total == 2
    found = lq.search(store, project, lq.LogFilter(attributes=(("k", "a\x00b"),)))
    assert [i["id"] for i in found.items] == [before[0]["id"]]

    migrate(store, command.downgrade, "0032")
    with store.reader.connect() as conn:
        back = conn.execute(sa.select(_logs_table("time_ns", "attributes"))
                            .order_by(sa.column("time_ns"))).all()
    assert [attrs for _, attrs in back] == old_attributes[::-1]
    with store.writer.begin() as conn:  # the writer before 0031 inserts again
        more = record(message(time=9))
        _, again = _old_rows(project, [more], [{"user.id": 42}])
        conn.execute(_logs_table("project_id", *OLD_COLUMNS, "received_us").insert(), again)
    migrate(store, command.upgrade, "head")
    assert lq.search(store, project, lq.LogFilter()).total == 3
    store.dispose()
