"""What the store can hold (storage/wire/storable.py), checked on every record whatever its
door: first the checks on their own, then the reproducer of issue 22 through the real
server on both stores (the OTLP specification's example metrics with one exponential
histogram counting 2^63: that point alone dropped and counted, the rest stored)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
import requests

from storage import rows
from storage.rows import Field, RowForm
from storage.wire.storable import JSON_DEPTH, Columns, Unstorable, check, json_depth
from tests.support.server import Server

BLOBS = RowForm("t", (Field("id", rows.BYTES, 8), Field("maybe", rows.BYTES, nullable=True),
                      Field("doc", rows.JSON)))


def test_bytes_are_checked_for_their_type_and_declared_size() -> None:
    columns = Columns.of(BLOBS)
    assert columns.blobs == (0,) and columns.optional_blobs == (1,)
    assert columns.max_bytes == ((0, 8),) and columns.json == (2,)
    assert not check([BLOBS.row(id=b"12345678", maybe=None, doc="{}"),
                      BLOBS.row(id=b"", maybe=b"x" * 100, doc="[]")], columns)
    for bad in (BLOBS.row(id=b"123456789", maybe=None, doc="{}"),
                BLOBS.row(id="12345678", maybe=None, doc="{}"),
                BLOBS.row(id=b"1", maybe="text", doc="{}")):
        with pytest.raises(Unstorable):
            check([bad], Columns.of(BLOBS))


def test_a_text_too_long_is_named_in_a_table_without_json() -> None:
    form = RowForm("t", (Field("name", rows.TEXT, 4), Field("id", rows.BYTES, 2)))
    with pytest.raises(Unstorable, match="longer than 4"):
        check([form.row(name="abcde", id=b"")], Columns.of(form))


def test_json_nesting_is_bounded() -> None:
    deepest = "[" * JSON_DEPTH + "]" * JSON_DEPTH
    # Brackets inside strings are text, not nesting.
    quoted = json.dumps(["[" * (3 * JSON_DEPTH), {"a": "{\\\"" * JSON_DEPTH}])
    assert json_depth(quoted) == 2
    assert not check([BLOBS.row(id=b"", maybe=None, doc=text)
                      for text in (deepest, quoted)], Columns.of(BLOBS))
    with pytest.raises(Unstorable, match="nests deeper"):
        check([BLOBS.row(id=b"", maybe=None, doc="[" + deepest + "]")], Columns.of(BLOBS))


# --- the reproducer, through the real server --------------------------------------

T = "1544712660300000000"
TOO_BIG = 2**63  # one past BIGINT


def _point(attribute: str, **values: object) -> dict[str, object]:
    return {"timeUnixNano": T, "attributes": [
        {"key": attribute, "value": {"stringValue": "some value"}}], **values}


def specification_metrics(exponential_count: int) -> bytes:
    """The shape of the OTLP specification's examples/metrics.json (a counter, a
    gauge, a histogram and an exponential histogram), written out as JSON text so
    that the count goes on the wire as the bare integer a client sends."""
    document = {"resourceMetrics": [{
        "resource": {"attributes": [{"key": "service.name",
                                     "value": {"stringValue": "my.service"}}]},
        "scopeMetrics": [{"scope": {"name": "my.library", "version": "1.0.0"}, "metrics": [
            {"name": "my.counter", "unit": "1", "description": "I am a Counter", "sum": {
                "aggregationTemporality": 1, "isMonotonic": True, "dataPoints": [
                    _point("my.counter.attr", asDouble=5, startTimeUnixNano=T)]}},
            {"name": "my.gauge", "unit": "1", "description": "I am a Gauge", "gauge": {
                "dataPoints": [_point("my.gauge.attr", asDouble=10)]}},
            {"name": "my.histogram", "unit": "1", "description": "I am a Histogram",
             "histogram": {"aggregationTemporality": 1, "dataPoints": [
                 _point("my.histogram.attr", startTimeUnixNano=T, count=2, sum=2,
                        bucketCounts=[1, 1], explicitBounds=[1], min=0, max=2)]}},
            {"name": "my.exponential.histogram", "unit": "1",
             "description": "I am an Exponential Histogram", "exponentialHistogram": {
                 "aggregationTemporality": 1, "dataPoints": [
                     _point("my.exponential.histogram.attr", startTimeUnixNano=T,
                            count=exponential_count, sum=10, scale=0, zeroCount=1,
                            positive={"offset": 1, "bucketCounts": [0, 2]},
                            min=0, max=5, zeroThreshold=0)]}},
        ]}]}]}
    return json.dumps(document).encode()


def dropped(server: Server, signal: str) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    match = re.search(rf'^sounding_records_dropped_total\{{reason="unencodable",'
                      rf'signal="{signal}"\}} (\S+)', text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


def test_a_point_past_bigint_is_dropped_alone_and_counted(
        start: Callable[..., Server], db_url: str) -> None:
    server = start(db_url)
    response = requests.post(server.base + "/ingest/v1/metrics",
                             data=specification_metrics(TOO_BIG), timeout=30,
                             headers=server.headers())
    assert response.status_code == 202, response.text
    names = sorted(name for (name,) in server.query(
        "SELECT s.name FROM metric_points p JOIN metric_series s "
        "ON s.project_id = p.project_id AND s.series_key = p.series_key"))
    assert names == ["my.counter", "my.gauge", "my.histogram"]
    assert dropped(server, "metrics") == 1
    # The same request with a count the store can hold keeps every point.
    response = requests.post(server.base + "/ingest/v1/metrics",
                             data=specification_metrics(TOO_BIG - 1).replace(
                                 T.encode(), str(int(T) + 1).encode()),
                             timeout=30, headers=server.headers())
    assert response.status_code == 202, response.text
    assert server.query("SELECT count(*) FROM metric_points")[0][0] == 7
    assert dropped(server, "metrics") == 1
    assert "Traceback" not in server.log()
