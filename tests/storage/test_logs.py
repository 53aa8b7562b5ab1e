"""Log records in the store (storage/logbody.py, wire.py, writer.py, queries/logs.py):
written through the real writer, read back with every field, on SQLite and
PostgreSQL; a retried batch adds no row; a record no stage touched is stored in
the bytes it came in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1 import logs_pb2

from model.records import Batch, LogRecord
from storage import keys, logbody, rows
from storage.queries import logs as lq
from storage.store import Store
from storage.wire.batch import encode_batch, encode_checked, write_batches

TRACE = "ab" * 16
SPAN = "cd" * 8
RESOURCE = {"service.name": "checkout", "host.name": "h1"}
BODY_KEY = rows.LOGS.getter("record_key")


def message(**kw: Any) -> logs_pb2.LogRecord:
    out = logs_pb2.LogRecord(
        time_unix_nano=kw.pop("time", 1_795_168_800_000_000_001),
        observed_time_unix_nano=1_795_168_800_000_000_002, severity_number=17,
        severity_text="ERROR", trace_id=bytes.fromhex(TRACE), span_id=bytes.fromhex(SPAN),
        flags=1, event_name="checkout.failed", dropped_attributes_count=2, **kw)
    out.body.kvlist_value.values.extend([
        KeyValue(key="msg", value=AnyValue(string_value="payment refused")),
        KeyValue(key="amount", value=AnyValue(double_value=12.5))])
    out.attributes.extend([KeyValue(key="user.id", value=AnyValue(int_value=42)),
                           KeyValue(key="raw", value=AnyValue(bytes_value=b"\x00\x01"))])
    return out


def record(otlp: logs_pb2.LogRecord, resource: dict[str, Any] | None = None) -> LogRecord:
    return LogRecord(otlp.time_unix_nano, otlp.observed_time_unix_nano, otlp.severity_number,
                     otlp.severity_text, otlp.trace_id.hex(), otlp.span_id.hex(), otlp.flags,
                     otlp.event_name, "checkout", "app.scope",
                     RESOURCE if resource is None else resource, otlp=otlp)


@pytest.fixture
def store(db_url: str) -> Iterator[tuple[Store, int]]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "logs")
    yield store, project
    store.dispose()


def _write(store: Store, *batches: Batch) -> None:
    with store.writer.begin() as conn:
        write_batches(conn, list(batches), 5)


def _all(store: Store, project: int) -> list[dict[str, Any]]:
    with store.reader.connect() as conn:
        rows_ = conn.execute(sa.select(*lq.COLUMNS).where(schema_logs().c.project_id == project)
                             .order_by(schema_logs().c.time_ns)).all()
        return lq.log_rows(conn, rows_)


def schema_logs() -> sa.Table:
    from storage.schema import logs
    return logs


def test_a_record_no_stage_looked_into_is_stored_in_the_bytes_it_came_in() -> None:
    otlp = message()
    log = record(otlp)
    assert log.find_attributes(frozenset({"user.id"})) == {"user.id": 42}
    wire = encode_batch(Batch(1, logs=[log]))
    assert rows.LOGS.getter("body")(wire.logs[0]) == otlp.SerializeToString()
    assert log.untouched  # encoding read the attributes and body without keeping them


def test_a_changed_record_is_stored_changed_and_the_rest_kept() -> None:
    log = record(message())
    log.attributes["user.id"] = "[redacted]"
    log.body = "replaced"
    stored = logbody.decode(logbody.encode(log))
    assert logbody.attributes(stored) == {"user.id": "[redacted]", "raw": "AAE="}
    assert logbody.body_value(stored) == "replaced"
    assert stored.dropped_attributes_count == 2 and stored.event_name == "checkout.failed"


def test_a_record_built_without_a_message_is_stored_with_its_fields() -> None:
    log = LogRecord(10, 11, 9, "INFO", TRACE, "", 0, "", "svc", "", {},
                    attributes={"k": [1, "a", None]}, body=7)
    stored = logbody.decode(logbody.encode(log))
    assert (stored.time_unix_nano, stored.observed_time_unix_nano, stored.severity_number,
            stored.severity_text, stored.trace_id.hex(), stored.span_id) == (
        10, 11, 9, "INFO", TRACE, b"")
    assert logbody.body_value(stored) == 7
    assert logbody.attributes(stored) == {"k": [1, "a", None]}


def key(resource_id: int, scope: str, body: bytes) -> bytes:
    return logbody.record_key(logbody.key_prefix(resource_id, scope), body)


def test_the_record_key_follows_resource_scope_and_record() -> None:
    body = message().SerializeToString()
    first = key(1, "s", body)
    assert len(first) == 16 and first == key(1, "s", body)
    assert len({first, key(2, "s", body), key(1, "t", body),
                key(1, "s", body + b"\x08\x01")}) == 4
    # The scope is length-prefixed: a scope and a body cannot pass for another pair.
    assert key(1, "s\n", body) != key(1, "s", b"\n" + body)
    assert key(1, "\ud800", body) != key(1, "?", body)  # any scope a stage sets is hashable


def test_body_text_is_the_string_or_the_json_of_the_body() -> None:
    assert logbody.body_text("héllo") == "héllo"
    assert logbody.body_text(None) == ""
    assert logbody.body_text({"a": [1, True]}) == '{"a":[1,true]}'
    assert logbody.body_text(3.5) == "3.5"


def test_an_unstorable_record_is_dropped_alone() -> None:
    bad = LogRecord(1, 1, 9, "INFO", "", "", 0, "", "svc", "", {}, attributes={"s": "\ud800"})
    good = record(message())
    wire, dropped = encode_checked(Batch(1, logs=[bad, good]))
    assert dropped == {"logs": 1} and len(wire.logs) == 1


def test_records_read_back_with_every_field(store: tuple[Store, int]) -> None:
    db, project = store
    plain = LogRecord(0, 1_795_168_800_000_000_000, 0, "", "", "", 0, "", "worker", "", {
        "service.name": "worker"}, body=None)
    _write(db, Batch(project, logs=[record(message()), plain]))
    first, second = _all(db, project)
    assert first == {
        "id": first["id"], "time_ns": 1_795_168_800_000_000_000,
        "observed_ns": 1_795_168_800_000_000_000, "severity_number": 0, "severity_text": "",
        "body": None, "attributes": {}, "resource": {"service.name": "worker"},
        "service_name": "worker", "scope_name": "", "trace_id": "", "span_id": "",
        "flags": 0, "event_name": "", "dropped_attributes_count": 0, "unreadable": []}
    assert second == {
        "id": second["id"], "time_ns": 1_795_168_800_000_000_001,
        "observed_ns": 1_795_168_800_000_000_002, "severity_number": 17,
        "severity_text": "ERROR", "body": {"msg": "payment refused", "amount": 12.5},
        "attributes": {"user.id": 42, "raw": "AAE="}, "resource": RESOURCE,
        "service_name": "checkout", "scope_name": "app.scope", "trace_id": TRACE,
        "span_id": SPAN, "flags": 1, "event_name": "checkout.failed",
        "dropped_attributes_count": 2, "unreadable": []}
    assert len(first["id"]) == 32
    with db.reader.connect() as conn:
        assert [r["id"] for r in lq.logs_of_trace(conn, project, TRACE)] == [second["id"]]
        assert lq.logs_of_trace(conn, project, "zz") == []
        assert lq.logs_of_trace(conn, project + 1, TRACE) == []
        text = conn.execute(sa.select(schema_logs().c.body_text)
                            .where(schema_logs().c.trace_id == bytes.fromhex(TRACE))).scalar()
    assert text == '{"msg":"payment refused","amount":12.5}'
    assert "attributes" not in schema_logs().c  # kept in the body only, searched there
    for pair in (("user.id", "42"), ("raw", "AAE=")):
        assert _found(db, project, pair) == [second["id"]]


def _found(store: Store, project: int, *pairs: tuple[str, str]) -> list[str]:
    page = lq.search(store, project, lq.LogFilter(attributes=pairs))
    return [item["id"] for item in page.items]


def test_a_retried_batch_adds_no_row(store: tuple[Store, int]) -> None:
    db, project = store
    batch = Batch(project, logs=[record(message()), record(message(time=5))])
    _write(db, batch)
    _write(db, batch, batch)  # a client's retry, twice in one commit
    assert len(_all(db, project)) == 2
    # The same record from another resource is another record.
    _write(db, Batch(project, logs=[record(message(), {"service.name": "other"})]))
    assert len(_all(db, project)) == 3


def test_a_body_that_does_not_parse_is_shown_unreadable(store: tuple[Store, int]) -> None:
    db, project = store
    _write(db, Batch(project, logs=[record(message())]))
    with db.writer.begin() as conn:
        conn.execute(sa.update(schema_logs()).values(body=b"\xff\xff"))
    (only,) = _all(db, project)
    assert only["unreadable"] == ["body"] and only["body"] is None
    assert only["severity_text"] == "ERROR"  # the columns are still read


def test_a_nul_in_attributes_is_stored_and_searched_as_it_came(
        store: tuple[Store, int]) -> None:
    db, project = store
    otlp = message()
    otlp.attributes.add(key="k\x00", value=AnyValue(string_value="a\x00b"))
    otlp.attributes.add(key="path", value=AnyValue(string_value="C:\\u0000"))  # no NUL
    _write(db, Batch(project, logs=[record(otlp)]))
    (stored,) = _all(db, project)
    assert stored["attributes"]["k\x00"] == "a\x00b"  # the record as it came
    assert _found(db, project, ("k\x00", "a\x00b")) == [stored["id"]]
    assert _found(db, project, ("path", "C:\\u0000")) == [stored["id"]]
    assert _found(db, project, ("k\ufffd", "a\ufffdb")) == []
