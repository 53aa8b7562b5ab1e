"""receiver/sentry/logs.py: Sentry's `log` items (as sentry-sdk 3 and @sentry/node 11
send them: tests/receiver/sentry/telemetry_items.py) and `otel_log` items become log
records, stored and forwarded as an OTLP record is; a bad log drops alone."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from exporters.forward.encode_logs import encode_logs
from model.records import Batch
from receiver.otlp.decode_logs import logs_from_proto
from receiver.sentry.envelope import parse_envelope
from receiver.sentry.items import decode_envelope
from receiver.sentry.logs import MAX_LOGS, SEVERITIES, decode_log_items, decode_otel_log
from storage import logbody
from storage.wire import batch as wire
from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.telemetry_items import (
    LOG_HEADERS,
    NODE_LOGS,
    NODE_SPAN_ID,
    NODE_TRACE_ID,
    PYTHON_LOGS,
    SPAN_ID,
    TRACE_ID,
    TS,
)

NOW_US = 1_796_692_300_000_000


def test_a_python_sdk_log_keeps_body_severity_time_ids_and_its_template() -> None:
    decoded = decode_log_items(PYTHON_LOGS, NOW_US)
    assert decoded.dropped == 0
    shipped, stock = decoded.logs
    assert (shipped.body, shipped.severity_number, shipped.severity_text) == (
        "order 42 shipped", 9, "info")
    assert (stock.body, stock.severity_number, stock.severity_text) == (
        "stock low for sku-1", 13, "warn")
    assert shipped.time_ns == round(TS * 1_000_000) * 1000
    assert shipped.observed_ns == shipped.time_ns  # a retry is the same record
    assert (shipped.trace_id, shipped.span_id) == (TRACE_ID, SPAN_ID)
    assert shipped.attributes["sentry.message.template"] == "order {order} shipped"
    assert shipped.attributes["sentry.message.parameter.order"] == 42
    assert stock.attributes["sentry.message.parameter.0"] == "sku-1"
    assert stock.attributes["logger.name"] == "shop"
    assert stock.attributes["code.line.number"] == 22
    assert shipped.attributes["server.address"] == "vm"
    assert shipped.otlp is None and shipped.scope_name == "sentry"


def test_release_environment_and_sdk_are_the_resource_not_attributes() -> None:
    shipped, stock = decode_log_items(PYTHON_LOGS, NOW_US).logs
    assert shipped.resource_attributes == {
        "service.name": "unknown_service:python", "service.version": "shop@1.2",
        "deployment.environment.name": "staging", "telemetry.sdk.name": "sentry.python.flask",
        "telemetry.sdk.version": "3.0.1"}
    assert shipped.resource_attributes is stock.resource_attributes  # shared, as for spans
    assert shipped.service_name == "unknown_service:python"
    for name in ("sentry.release", "sentry.environment", "sentry.sdk.name",
                 "sentry.severity_number", "sentry.severity_text"):
        assert name not in shipped.attributes


def test_a_node_log_takes_its_severity_number_and_its_parent_span() -> None:
    [log] = decode_log_items(NODE_LOGS, NOW_US).logs
    assert (log.severity_number, log.trace_id, log.span_id) == (9, NODE_TRACE_ID,
                                                                NODE_SPAN_ID)
    assert "sentry.trace.parent_span_id" not in log.attributes
    assert log.attributes["region"] == "eu"
    assert log.service_name == "unknown_service:node"
    assert log.resource_attributes["service.version"] == "r@1"


def test_a_service_attribute_names_the_service_as_for_a_span() -> None:
    payload = copy.deepcopy(NODE_LOGS)
    payload["items"][0]["attributes"]["service"] = {"type": "string", "value": "checkout"}
    [log] = decode_log_items(payload, NOW_US).logs
    assert log.service_name == log.resource_attributes["service.name"] == "checkout"


def test_without_a_number_the_level_gives_the_severity() -> None:
    logs = [{"timestamp": TS, "level": level, "body": level, "trace_id": TRACE_ID}
            for level in ("trace", "debug", "info", "warn", "error", "fatal", "loud")]
    decoded = decode_log_items({"items": logs}, NOW_US)
    assert [r.severity_number for r in decoded.logs] == [1, 5, 9, 13, 17, 21, 0]
    assert SEVERITIES["warning"] == 13


def test_a_log_without_time_is_dated_by_its_arrival_and_a_bad_id_is_left_unset() -> None:
    [log] = decode_log_items({"items": [{"level": "info", "body": "hi",
                                         "trace_id": "not-hex"}]}, NOW_US).logs
    assert (log.time_ns, log.when_ns, log.trace_id, log.span_id) == (
        0, NOW_US * 1000, "", "")


def test_a_bad_log_drops_alone_with_its_reason() -> None:
    good = PYTHON_LOGS["items"][0]
    decoded = decode_log_items({"items": [good, "x", {"level": "info"}, good]}, NOW_US)
    assert len(decoded.logs) == 2
    assert decoded.dropped == 2
    assert decoded.reasons == ["items[1]: a log must be an object",
                               "items[2]: body must be set"]
    nothing = decode_log_items(["not", "an", "object"], NOW_US)
    assert (nothing.logs, nothing.dropped) == ([], 1)


def test_at_most_max_logs_per_item() -> None:
    one = {"timestamp": TS, "level": "info", "body": "x"}
    decoded = decode_log_items({"items": [one] * (MAX_LOGS + 5)}, NOW_US)
    assert (len(decoded.logs), decoded.dropped) == (MAX_LOGS, 5)


def test_a_log_is_stored_with_its_attributes_and_forwarded_with_its_values() -> None:
    batch = Batch(project_id=1, logs=decode_log_items(PYTHON_LOGS, NOW_US).logs)
    for record in batch.logs:
        stored = logbody.decode(logbody.encode(record))
        assert logbody.attributes(stored) == record.attributes
        assert logbody.body_value(stored) == record.body
        assert (stored.severity_number, stored.trace_id.hex()) == (
            record.severity_number, record.trace_id)
    assert logbody.attribute_patterns("sentry.message.template", "order {order} shipped")
    assert len(wire.encode_batch(batch).logs) == 2
    request, failed = encode_logs(batch.logs)
    assert failed == 0
    again = logs_from_proto(request, NOW_US * 1000).logs
    assert [(r.body, r.severity_number, r.span_id, r.resource_attributes["service.version"])
            for r in again] == [(r.body, r.severity_number, r.span_id, "shop@1.2")
                                for r in batch.logs]


def test_an_otel_log_item_is_read_by_the_otlp_decoder() -> None:
    payload = {"resourceLogs": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "billing"}}]},
        "scopeLogs": [{"scope": {"name": "billing.app"}, "logRecords": [
            {"timeUnixNano": "1796692267884889600", "severityNumber": 17,
             "severityText": "ERROR", "body": {"stringValue": "card declined"},
             "traceId": TRACE_ID, "spanId": SPAN_ID}]}]}]}
    [log] = decode_otel_log(payload, NOW_US).logs
    assert (log.service_name, log.scope_name, log.body, log.severity_number, log.trace_id) == (
        "billing", "billing.app", "card declined", 17, TRACE_ID)
    broken = decode_otel_log({"resourceLogs": "no"}, NOW_US)
    assert (broken.logs, broken.dropped) == ([], 1)
    assert broken.reasons[0].startswith("otel_log: ")


def test_in_an_envelope_a_log_item_that_cannot_be_read_drops_alone() -> None:
    body = envelope({}, [
        item("log", PYTHON_LOGS, item_count=2, **LOG_HEADERS),
        item("log", b"{not json", **LOG_HEADERS),
        item("otel_log", [1, 2]),
        item("event", {"message": "kept", "level": "error"})])
    decoded = decode_envelope(parse_envelope(body), NOW_US, body)
    assert len(decoded.logs) == 2 and len(decoded.errors) == 1
    assert decoded.drops()["logs"] == 2
    assert decoded.items["log"] == 2 and decoded.items["otel_log"] == 1
    assert [r.split(":")[0] for r in decoded.reasons] == ["items[1].log", "items[2].otel_log"]


ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
    | st.sampled_from(["info", "warn", TRACE_ID, SPAN_ID]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["timestamp", "level", "body", "trace_id", "span_id",
                         "severity_number", "attributes", "value", "type"]), inner,
        max_size=5), max_leaves=15)


@settings(max_examples=200, deadline=None)
@given(st.lists(ANY_JSON, max_size=4))
def test_never_raises_whatever_a_log_holds(logs: list[Any]) -> None:
    decoded = decode_log_items({"items": logs}, NOW_US)
    assert len(decoded.logs) + decoded.dropped == len(logs)
    for record in decoded.logs:
        logbody.encode(record)
