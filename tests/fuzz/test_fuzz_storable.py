"""The writer never raises for a record that passed the store's check (storage/wire/storable.py,
run by storage/wire/batch.py on every batch): records of every signal with extreme values,
through every door's own code (OTLP/HTTP protobuf and JSON, OTLP and Sounding gRPC,
the custom JSON doors, Sentry envelopes), the default processors, then the real writer
on SQLite and PostgreSQL. A door may refuse a body (a 4xx); what it lets through is
checked, kept or dropped alone, and whatever is kept is written.

In-process (a pipeline whose exporter keeps the batches) rather than over a socket:
the other fuzz modules hold the doors' answers; this one holds the writer, and runs in
seconds. SOUNDING_FUZZ_EXAMPLES raises the number of examples (tests/fuzz/doors.py)."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from model.component import Exporter
from model.errors import PermanentError
from model.records import Batch
from processors.classify import ClassifyProcessor
from processors.exceptions import ExceptionsProcessor
from processors.grouping import GroupingProcessor
from processors.logexceptions import LogExceptionsProcessor
from processors.reopen import ReopenProcessor
from processors.spanmetrics import SpanMetricsProcessor
from receiver.http.base import JSON, PROTOBUF
from receiver.sentry.envelope import parse_envelope
from receiver.sentry.items import decode_envelope
from receiver.signals.outcome import Origin
from receiver.signals.table import SIGNALS
from runtime.pipeline import Pipeline
from storage.store import Store
from storage.wire.batch import write_batches
from tests.fuzz import proto_strategies as ps
from tests.fuzz import sentry_strategies as ss
from tests.fuzz import strategies as s
from tests.fuzz.doors import fuzz
from tests.fuzz.strategies import EDGE_FLOATS, EDGE_INTS, uniform
from tests.support import clients
from tests.support.postgres import fresh_database

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)

NOW_US = 1_764_000_000_000_000
DOORS = {signal.name: signal for signal in SIGNALS}


class Keep(Exporter):
    """Keeps what the pipeline hands it, for the test to write."""

    def __init__(self) -> None:
        super().__init__("keep")
        self.batches: list[Batch] = []

    async def export(self, batch: Batch) -> None:
        self.batches.append(batch)


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres",
                                                                    marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Store]:
    def opened(url: str) -> Iterator[Store]:
        store = Store(url)
        store.upgrade()
        yield store
        store.dispose()

    if request.param == "sqlite":
        yield from opened(f"sqlite:///{tmp_path_factory.mktemp('storable') / 'sounding.db'}")
    else:
        with fresh_database() as url:
            yield from opened(url)


def http(store: Store, signal: str, body: bytes, media_type: str = JSON) -> None:
    """`body` through the HTTP door of `signal`."""
    try:
        document = DOORS[signal].http.document(body, media_type)
    except PermanentError:
        return  # refused at the door: a 4xx, nothing reaches the writer
    through(store, signal, document)


def grpc(store: Store, signal: str, message: bytes) -> None:
    """`message` through the gRPC door of `signal`."""
    try:
        document = DOORS[signal].grpc.document(message)
    except PermanentError:
        return
    through(store, signal, document)


def through(store: Store, signal: str | None, document: Any = None,
            batch: Batch | None = None) -> None:
    """A door's `document` through its signal's handler (or `batch`, as the Sentry door
    hands it on) and the default processors, then every batch written in one
    transaction: the writer must not raise."""
    keep = Keep()
    pipeline = Pipeline([ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics"),
                         ExceptionsProcessor("exceptions"),
                         LogExceptionsProcessor("logexceptions"),
                         GroupingProcessor("grouping"), ReopenProcessor("reopen")], [keep])
    async def send() -> None:
        if batch is not None:
            await pipeline.consume(batch)
        else:
            await DOORS[signal].handle(pipeline, Origin(1, 0), document)  # type: ignore[index]

    try:
        asyncio.run(send())
    except PermanentError:
        return  # refused at the door: a 4xx, nothing reaches the writer
    with store.writer.begin() as conn:
        write_batches(conn, keep.batches, NOW_US)


# --- metric points, the door that let 2^63 through --------------------------------

# Mostly times a door keeps (a point at an edge of time is dropped there), counts and
# numbers mostly at the edges of what 32 and 64 bits and a double hold.
TIMES = uniform(st.integers(1_700_000_000_000_000_000, 1_800_000_000_000_000_000),
                st.sampled_from([1, 2**63 - 1, 2**64 - 1]))
COUNTS = uniform(st.sampled_from(EDGE_INTS), st.sampled_from(ps.U64_EDGES),
                 st.integers(0, 10))
FLOATS = uniform(st.sampled_from([f for f in EDGE_FLOATS if math.isfinite(f)]),
                 st.floats(allow_nan=False, allow_infinity=False))


@st.composite
def json_points(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    """An OTLP/JSON data point of `kind`, its numbers bare or as strings, at the edges."""
    def number(strategy: st.SearchStrategy[Any]) -> Any:
        value = draw(strategy)
        return str(value) if draw(st.booleans()) and isinstance(value, int) else value

    point: dict[str, Any] = {"timeUnixNano": number(TIMES),
                             "startTimeUnixNano": number(TIMES),
                             "attributes": [{"key": "http.route", "value": {
                                 "stringValue": draw(ps.texts())}}]}
    if kind in ("gauge", "sum"):
        point[draw(st.sampled_from(["asInt", "asDouble"]))] = number(
            uniform(st.sampled_from(EDGE_INTS), FLOATS))
        return point
    point.update(count=number(COUNTS), sum=draw(FLOATS))
    if kind == "histogram":
        bounds = draw(st.lists(FLOATS, max_size=3))
        point.update(explicitBounds=bounds, min=draw(FLOATS), max=draw(FLOATS),
                     bucketCounts=[number(COUNTS) for _ in range(len(bounds) + 1)])
    elif kind == "exponentialHistogram":
        point.update(scale=draw(st.sampled_from([0, -10, 20, 21, 2**31])),
                     zeroCount=number(COUNTS), zeroThreshold=draw(FLOATS),
                     positive={"offset": draw(st.sampled_from(ps.I32_EDGES)),
                               "bucketCounts": draw(st.lists(COUNTS, max_size=3))},
                     negative={"offset": 0, "bucketCounts": [number(COUNTS)]})
    else:
        point["quantileValues"] = [{"quantile": draw(FLOATS), "value": draw(FLOATS)}]
    return point


@st.composite
def metrics_json(draw: st.DrawFn) -> dict[str, Any]:
    metrics = []
    for kind in draw(st.lists(st.sampled_from(
            ["gauge", "sum", "histogram", "exponentialHistogram", "summary"]),
            min_size=1, max_size=4)):
        data: dict[str, Any] = {"dataPoints": draw(st.lists(json_points(kind), min_size=1,
                                                            max_size=2))}
        if kind != "gauge" and kind != "summary":
            data["aggregationTemporality"] = draw(st.sampled_from([1, 2]))
        if kind == "sum":
            data["isMonotonic"] = draw(st.booleans())
        metrics.append({"name": draw(st.sampled_from(["http.server.request.duration",
                                                      "m", "\u00b5"])),
                        "unit": draw(st.sampled_from(["s", "ms", "", "\u00b5s"])), kind: data})
    return {"resourceMetrics": [{
        "resource": {"attributes": [{"key": "service.name",
                                     "value": {"stringValue": draw(ps.texts())}}]},
        "scopeMetrics": [{"scope": {"name": draw(ps.texts())}, "metrics": metrics}]}]}


def _as_proto(document: dict[str, Any]) -> bytes | None:
    """The same request as protobuf, when every value fits its protobuf field."""
    from google.protobuf import json_format
    try:
        request = json_format.ParseDict(document, ExportMetricsServiceRequest())
    except (json_format.ParseError, ValueError, TypeError, OverflowError):
        return None
    for rm in request.resource_metrics:
        rm.resource.attributes.add(key="x", value=AnyValue(int_value=2**63 - 1))
    return request.SerializeToString()


@fuzz(60)
@given(document=metrics_json())
def test_metric_points_through_every_door(store: Store, document: dict[str, Any]) -> None:
    http(store, "metrics", json.dumps(document).encode())
    proto = _as_proto(document)
    if proto is not None:
        http(store, "metrics", proto, PROTOBUF)
        grpc(store, "metrics", proto)


# --- spans and log records ----------------------------------------------------------

@fuzz(25)
@given(case=ps.trace_requests(), span=s.mutations(s.json_span()))
def test_spans_through_every_door(store: Store, case: ps.ProtoCase, span: s.Mutated) -> None:
    http(store, "traces", case.body, PROTOBUF)
    grpc(store, "traces", case.body)
    http(store, "traces", s.dumps(s.json_traces(span.body)))


@fuzz(25)
@given(case=ps.log_requests())
def test_log_records_through_every_door(store: Store, case: ps.ProtoCase) -> None:
    http(store, "logs", case.body, PROTOBUF)
    grpc(store, "logs", case.body)


# --- errors, deploys and request metrics: the custom doors ------------------------

@fuzz(25)
@given(error=s.mutations(s.valid_error()), deploy=s.mutations(s.valid_deploy()),
       request=s.mutations(s.valid_request()), record=ps.error_records(),
       deploy_record=ps.deploy_records(), request_record=ps.request_metrics())
def test_custom_records_through_every_door(
        store: Store, error: s.Mutated, deploy: s.Mutated, request: s.Mutated,
        record: ps.ErrorCase, deploy_record: Any, request_record: Any) -> None:
    for name, body in (("errors", error.body), ("errors_batch", {"errors": [error.body]}),
                       ("deploys", deploy.body), ("requests", {"requests": [request.body]})):
        http(store, name, s.dumps(body))
    for name, wire in (("errors", record.wire), ("errors_batch", ps.error_batch(record.wire)),
                       ("deploys", deploy_record.SerializeToString()),
                       ("requests", ps._field(1, request_record.SerializeToString()))):
        grpc(store, name, wire)


# --- Sentry envelopes -----------------------------------------------------------------

@fuzz(25)
@given(envelope=ss.envelopes())
def test_sentry_envelopes(store: Store, envelope: ss.Envelope) -> None:
    try:
        decoded = decode_envelope(parse_envelope(envelope.render()), NOW_US)
    except PermanentError:
        return
    through(store, None, batch=Batch(1, errors=list(decoded.errors),
                                     spans=list(decoded.spans)))
