"""The writer's bulk path (storage/writer/copy.py): on PostgreSQL rows go in by COPY
and staged inserts, on SQLite by executemany; either way the store holds exactly the
values of the wire rows, odd text and bytes included, each row once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa

from model.records import Batch, Deploy, ErrorEvent, LogRecord, Span
from processors.grouping import GroupingProcessor
from storage import keys, rows
from storage.store import Store
from storage.wire.batch import encode_batch, write_batches
from storage.writer.commit import SPAN_COLUMNS, BatchWriter
from storage.writer.copy import StagedTable, Staging
from tests.support.postgres import fresh_database

NS = 1_000_000_000
T0 = 1_795_168_800 * NS
# What COPY's text form escapes, and what its binary form must carry as is.
ODD = ["tab\there", "new\nline\r\n", "back\\slash \\N \\.", "unicode ✓ 𝄞 é", "", "\\x00ff",
       "quote ' \" ;", "\x7f\x1b[0m"]
RESOURCE = {"service.name": "shop\tfront", "weird": "a\\b\nc"}


@pytest.fixture
def project(store: Store) -> int:
    with store.writer.begin() as conn:
        return keys.ensure_project(conn, "copy")


def span(n: int, name: str = "GET /", message: str = "", attributes: Any = None) -> Span:
    return Span(f"{n:032x}", f"{n:016x}", "", name, 2, T0 + n, T0 + n + 5, 0, message,
                "shop", "scope\tname", RESOURCE, attributes=attributes or {}, events=[])


def read(store: Store, sql: str) -> list[Any]:
    with store.reader.connect() as conn:
        return [tuple(row) for row in conn.execute(sa.text(sql))]


def write(store: Store, *batches: Batch) -> None:
    with store.writer.begin() as conn:
        write_batches(conn, list(batches), 7)


def as_stored(value: Any) -> Any:
    return bytes(value) if isinstance(value, memoryview) else value


def test_spans_keep_every_odd_value_exactly(store: Store, project: int) -> None:
    spans = [span(i, name=text, message=ODD[-1 - i],
                  attributes={"k\t": text, "b": "\x00 in an attribute", "n": i})
             for i, text in enumerate(ODD)]
    batch = Batch(project_id=project, spans=spans)
    write(store, batch)
    expected = sorted((project, *row) for row in encode_batch(batch).spans)
    names = ", ".join(f'"{c}"' for c in SPAN_COLUMNS)
    stored = read(store, f"SELECT {names} FROM spans ORDER BY span_id")
    assert [tuple(map(as_stored, row)) for row in stored] == expected
    # The resource's JSON text too.
    assert read(store, "SELECT count(*) FROM resources") == [(1,)]


def test_nul_in_text_is_stored_as_the_replacement_character(store: Store, project: int
                                                            ) -> None:
    # PostgreSQL text cannot hold NUL: the wire form mends it, for both stores alike.
    write(store, Batch(project_id=project, spans=[span(1, name="a\x00b")]))
    assert read(store, "SELECT name FROM spans") == [("a\ufffdb",)]


def test_bytes_columns_carry_nul_and_every_byte(store: Store, project: int) -> None:
    # A trace id of every byte value pattern that text COPY would have to escape.
    trace = bytes([0, 9, 10, 13, 92, 255, 0, 0, 46, 78, 0, 1, 2, 3, 4, 5]).hex()
    item = Span(trace, "00" * 7 + "5c", "", "x", 1, T0, T0 + 1, 0, "", "shop", "s", {},
                attributes={"zero": 0, "bytes": "\x00\t\\"}, events=[])
    batch = Batch(project_id=project, spans=[item])
    write(store, batch)
    body = encode_batch(batch).spans[0][rows.SPANS.names.index("body")]
    assert b"\x00" in body
    stored = read(store, "SELECT trace_id, span_id, body FROM spans")
    assert [tuple(map(bytes, row)) for row in stored] == [
        (bytes.fromhex(trace), bytes.fromhex("00" * 7 + "5c"), body)]


def error(n: int, **fields: Any) -> ErrorEvent:
    return ErrorEvent("", "ValueError", f"bad {n}", ["a.py:1\tin f", "b.py:2 \\ in g"],
                      1_795_168_800_000_000 + n, **fields)


def test_errors_with_nulls_and_json_odd_text(store: Store, project: int) -> None:
    bare = error(1)  # every nullable column NULL
    full = error(2, params={"q": "tab\t\\ \"quoted\" \u2713", "nul": "\x00"},
                 tags={"env": "prod\nuction"}, level="error", request_id="r\t1")
    batch = GroupingProcessor("grouping").process(
        Batch(project_id=project, errors=[bare, full]))
    write(store, batch)
    stored = read(store, "SELECT message, params, request_id, tags, level, occurrence_key "
                         "FROM error_events ORDER BY message")
    assert [row[0] for row in stored] == ["bad 1", "bad 2"]
    assert stored[0][1:] == (None, None, None, None, None)
    params = stored[1][1] if isinstance(stored[1][1], dict) else json.loads(stored[1][1])
    assert params == {"q": "tab\t\\ \"quoted\" \u2713", "nul": "\x00"}
    assert stored[1][2] == "r\t1" and stored[1][4] == "error"
    assert read(store, "SELECT count FROM error_groups") == [(2,)]


def test_a_very_large_row(store: Store, project: int) -> None:
    big = "x\t\\é" * 1_000_000  # 4 M characters, 5 MB of UTF-8
    write(store, Batch(project_id=project, spans=[span(1, message=big)]),
          Batch(project_id=project, deploys=[Deploy("abc", 1_795_168_800_000_000,
                                                    description=big[:100_000])]))
    assert read(store, "SELECT length(status_message) FROM spans") == [(len(big),)]
    assert read(store, "SELECT length(description) FROM deploys") == [(100_000,)]


def log(n: int, body: str) -> LogRecord:
    return LogRecord(T0 + n, T0 + n, 9, "INFO", "", "", 0, "", "shop", "s", RESOURCE,
                     attributes={"a": body}, body=body)


def test_duplicates_in_one_batch_and_across_commits_are_stored_once(
        store: Store, project: int) -> None:
    spans = [span(1), span(2), span(1)]  # span 1 twice in one batch
    logs = [log(1, "same\tbody"), log(1, "same\tbody"), log(2, "other")]
    write(store, Batch(project_id=project, spans=spans, logs=logs),
          Batch(project_id=project, spans=[span(2)], logs=[log(2, "other")]))
    write(store, Batch(project_id=project, spans=[span(3), span(1)], logs=[log(1, "same\tbody")]))
    assert read(store, "SELECT count(*) FROM spans") == [(3,)]
    assert read(store, "SELECT count(*) FROM logs") == [(2,)]


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_database() as url:
        store = Store(url)
        store.upgrade()
        store.dispose()
        yield url.replace("+psycopg", "")


def test_a_failed_transaction_leaves_the_staging_table_empty(pg_url: str) -> None:
    """PostgreSQL's alone: SQLite has no staging table."""
    project = 1
    stage = f"stage_{rows.SPANS.table}"
    writer = BatchWriter("postgresql")

    def commit(conn: Any, *spans: Span, then: str = "commit") -> int:
        """Write in one transaction; the rows the staging table held before its end."""
        with conn.cursor() as cursor:
            writer.write(cursor, [encode_batch(Batch(project_id=project, spans=list(spans)))],
                         7)
            held = cursor.execute(f"SELECT count(*) FROM {stage}").fetchone()[0]
        getattr(conn, then)()
        if then == "commit":
            writer.committed()
        return int(held)

    with psycopg.connect(pg_url) as conn:
        conn.execute("INSERT INTO projects (id, name, created_us) VALUES (1, 'copy', 0)")
        conn.commit()
        # The staging table made in a transaction rolled back is made again.
        assert commit(conn, span(1), span(1), then="rollback") == 2
        assert commit(conn, span(1), span(1)) == 2  # a duplicate: through the staging table
        assert conn.execute(f"SELECT count(*) FROM {stage}").fetchone() == (0,)
        conn.rollback()
        assert commit(conn, span(1), span(2), then="rollback") == 2
        assert conn.execute(f"SELECT count(*) FROM {stage}").fetchone() == (0,)
        conn.rollback()
        assert commit(conn, span(2), span(2)) == 2
        assert conn.execute("SELECT count(*) FROM spans").fetchone() == (2,)


def test_the_copy_first_savepoint_is_inside_the_callers_transaction(pg_url: str) -> None:
    """COPYing straight into the table as the transaction's first statement (a commit of
    metric points whose series are known, say) must not commit on its own: a rollback
    takes it back with the rest."""
    staged = StagedTable(rows.SPANS, SPAN_COLUMNS, ("project_id", "trace_id", "span_id"),
                         copy_first=True)
    wire = encode_batch(Batch(project_id=1, spans=[span(1)])).spans[0]
    with psycopg.connect(pg_url) as conn:
        for rows_before, duplicate in ((0, False), (1, True)):
            staging = Staging()
            with conn.cursor() as cursor:
                staging.begin(cursor)
                staging.insert(cursor, staged, [(1, *wire)] * (2 if duplicate else 1))
            conn.rollback()
            assert conn.execute("SELECT count(*) FROM spans").fetchone() == (rows_before,)
            conn.rollback()
            if not duplicate:  # now one stored, for the duplicate round's staged path
                with conn.cursor() as cursor:
                    staging.begin(cursor)
                    staging.insert(cursor, staged, [(1, *wire)])
                conn.commit()
                staging.committed()
