"""Realistic request bodies for the benchmark, built once, made unique cheaply.

Spans are stored with `ON CONFLICT DO NOTHING` on (project, trace id, span id),
so a body sent twice would be stored once and the stored-equals-acknowledged
check would fail for the wrong reason. Each trace body is therefore a template:
it is serialised once, the byte offsets of every trace id are recorded, and
`Template.render(n)` writes a per-request number into those ids. That costs a few
hundred slice assignments per request instead of a full serialisation, so the
load generator stays far cheaper than the server it drives.
"""

from __future__ import annotations

import json
import random
import struct
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1 import trace_pb2

SPANS_PER_REQUEST = 512
SPANS_PER_TRACE = 8
LOGS_PER_REQUEST = 512
LOGS_PER_TRACE = 8
ERRORS_PER_BATCH = 100
FINGERPRINTS = 1_000
REQUESTS_PER_BATCH = 1_000
BASE_NS = 1_790_000_000_000_000_000  # 2026-09, a fixed time so runs compare

SERVICES = ("checkout", "catalog", "payments", "accounts")
ROUTES = ("/api/orders/{id}", "/api/cart", "/api/products", "/api/products/{id}",
          "/api/login", "/api/search", "/health", "/api/payments/{id}/capture")
TABLES = ("orders", "order_items", "products", "users", "payments", "sessions")
TOPICS = ("orders.created", "payments.captured", "emails.outbox")

# Distinct ids are written at these offsets: 8 bytes of request number in the
# first half of each 16-byte trace id. The second half stays unique per trace slot.
MARK = b"\xfe\xed\xfa\xce\xca\xfe\xba\xbe"


def _kv(key: str, value: Any) -> KeyValue:
    if isinstance(value, bool):
        return KeyValue(key=key, value=AnyValue(bool_value=value))
    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=str(value)))


def _resource(service: str) -> dict[str, Any]:
    return {
        "service.name": service,
        "service.version": "2.14.1",
        "service.instance.id": f"{service}-7d9f8c6b5-x2k4q",
        "deployment.environment.name": "production",
        "host.name": "ip-10-0-3-17.eu-west-1.compute.internal",
        "telemetry.sdk.language": "python",
        "telemetry.sdk.name": "opentelemetry",
        "telemetry.sdk.version": "1.27.0",
        "process.runtime.name": "cpython",
        "process.pid": 4242,
    }


def _trace_spans(rng: random.Random, slot: int) -> list[dict[str, Any]]:
    """One trace: a server span, database calls, a message publish, internal work."""
    route = rng.choice(ROUTES)
    path = route.replace("{id}", str(rng.randrange(1, 99_999)))
    start = BASE_NS + slot * 7_000_000
    root_ns = rng.randrange(2_000_000, 250_000_000)
    status = rng.choice((200, 200, 200, 200, 201, 204, 400, 404, 500))
    spans = [{
        "name": f"GET {route}", "kind": trace_pb2.Span.SPAN_KIND_SERVER, "start": start,
        "end": start + root_ns, "parent": 0, "error": status >= 500,
        "attrs": {"http.request.method": "GET", "http.route": route,
                  "http.response.status_code": status,
                  "url.full": f"https://shop.example.com{path}?page=2",
                  "server.address": "shop.example.com", "network.protocol.version": "1.1",
                  "user_agent.original": "Mozilla/5.0 (X11; Linux x86_64) Firefox/131.0",
                  "client.address": f"203.0.113.{rng.randrange(1, 254)}"},
    }]
    for i in range(1, SPANS_PER_TRACE):
        offset = start + i * root_ns // (SPANS_PER_TRACE + 1)
        duration = rng.randrange(100_000, max(root_ns // SPANS_PER_TRACE, 200_000))
        kind = i % 4
        if kind in (1, 2):
            table = rng.choice(TABLES)
            op = rng.choice(("SELECT", "SELECT", "INSERT", "UPDATE"))
            spans.append({
                "name": f"{op} shop.{table}", "kind": trace_pb2.Span.SPAN_KIND_CLIENT,
                "start": offset, "end": offset + duration, "parent": 0, "error": False,
                "attrs": {"db.system": "postgresql", "db.name": "shop", "db.operation": op,
                          "db.statement": f"{op} * FROM {table} WHERE id = $1 AND tenant = $2",
                          "net.peer.name": "db-primary.internal", "net.peer.port": 5432}})
        elif kind == 3:
            topic = rng.choice(TOPICS)
            spans.append({
                "name": f"{topic} publish", "kind": trace_pb2.Span.SPAN_KIND_PRODUCER,
                "start": offset, "end": offset + duration, "parent": 0, "error": False,
                "attrs": {"messaging.system": "kafka", "messaging.destination.name": topic,
                          "messaging.operation": "publish",
                          "messaging.kafka.message.key": f"order-{rng.randrange(10**6)}",
                          "server.address": "kafka-1.internal"}})
        else:
            spans.append({
                "name": "render_template", "kind": trace_pb2.Span.SPAN_KIND_INTERNAL,
                "start": offset, "end": offset + duration, "parent": 0, "error": False,
                "attrs": {"template.name": "order_detail.html", "cache.hit": False}})
    return spans


@dataclass
class Template:
    """A serialised body and where each request's trace ids and times go."""

    body: bytes
    id_offsets: list[int]
    time_offsets: list[tuple[int, int]]  # (offset, nanoseconds after BASE_NS)
    json: bool  # JSON bodies carry ids as hex text and times as decimal strings
    spans: int

    def render(self, n: int, now_ns: int) -> bytes:
        """The body with request number `n` in every trace id, shifted to `now_ns`."""
        out = bytearray(self.body)
        # A bijection on 64 bits: unique per n, and spread like random trace ids are.
        stamp = struct.pack(">Q", (n * 0x9E3779B97F4A7C15) & 0xFFFF_FFFF_FFFF_FFFF)
        if self.json:
            stamp = stamp.hex().encode()
        width = len(stamp)
        for offset in self.id_offsets:
            out[offset:offset + width] = stamp
        for offset, delta in self.time_offsets:
            if self.json:
                out[offset:offset + 19] = b"%019d" % (now_ns + delta)
            else:
                struct.pack_into("<Q", out, offset, now_ns + delta)
        return bytes(out)


def _offsets(body: bytes, mark: bytes) -> list[int]:
    offsets, at = [], body.find(mark)
    while at >= 0:
        offsets.append(at)
        at = body.find(mark, at + len(mark))
    return offsets


def _time_offsets(body: bytes, times: list[int], as_text: bool) -> list[tuple[int, int]]:
    found = []
    for value in sorted(set(times)):
        needle = str(value).encode() if as_text else struct.pack("<Q", value)
        found += [(offset, value - BASE_NS) for offset in _offsets(body, needle)]
    return found


def _traces(seed: int) -> tuple[str, list[tuple[bytes, list[dict[str, Any]]]]]:
    rng = random.Random(seed)
    service = SERVICES[seed % len(SERVICES)]
    traces = []
    for slot in range(SPANS_PER_REQUEST // SPANS_PER_TRACE):
        trace_id = MARK + struct.pack(">II", seed, slot)
        traces.append((trace_id, _trace_spans(rng, slot)))
    return service, traces


def _times(traces: list[tuple[bytes, list[dict[str, Any]]]]) -> list[int]:
    return [t for _, spans in traces for s in spans for t in (s["start"], s["end"])]


def traces_proto(seed: int = 0) -> Template:
    service, traces = _traces(seed)
    request = ExportTraceServiceRequest()
    rs = request.resource_spans.add()
    rs.resource.attributes.extend(_kv(k, v) for k, v in _resource(service).items())
    ss = rs.scope_spans.add()
    ss.scope.name = "opentelemetry.instrumentation.flask"
    ss.scope.version = "0.48b0"
    for trace_id, spans in traces:
        root_id = b""
        for i, s in enumerate(spans):
            span_id = struct.pack(">Q", i + 1)
            span = ss.spans.add(
                trace_id=trace_id, span_id=span_id, parent_span_id=root_id if i else b"",
                name=s["name"], kind=s["kind"], start_time_unix_nano=s["start"],
                end_time_unix_nano=s["end"])
            span.attributes.extend(_kv(k, v) for k, v in s["attrs"].items())
            if s["error"]:
                span.status.code = trace_pb2.Status.STATUS_CODE_ERROR
                span.status.message = "internal server error"
            if i == 0:
                root_id = span_id
    body = request.SerializeToString()
    offsets = _offsets(body, MARK)
    assert len(offsets) == SPANS_PER_REQUEST, len(offsets)
    times = _time_offsets(body, _times(traces), as_text=False)
    assert len(times) == 2 * SPANS_PER_REQUEST, len(times)
    return Template(body, offsets, times, json=False, spans=SPANS_PER_REQUEST)


def _json_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def traces_json(seed: int = 0) -> Template:
    """The same traces as OTLP/JSON, as the JavaScript exporter sends them."""
    service, traces = _traces(seed)
    spans_json = []
    for trace_id, spans in traces:
        for i, s in enumerate(spans):
            span: dict[str, Any] = {
                "traceId": trace_id.hex(), "spanId": struct.pack(">Q", i + 1).hex(),
                "parentSpanId": struct.pack(">Q", 1).hex() if i else "",
                "name": s["name"], "kind": s["kind"],
                "startTimeUnixNano": str(s["start"]), "endTimeUnixNano": str(s["end"]),
                "attributes": [{"key": k, "value": _json_value(v)}
                               for k, v in s["attrs"].items()],
                "status": {"code": 2, "message": "internal server error"} if s["error"] else {},
            }
            spans_json.append(span)
    doc = {"resourceSpans": [{
        "resource": {"attributes": [{"key": k, "value": _json_value(v)}
                                    for k, v in _resource(service).items()]},
        "scopeSpans": [{"scope": {"name": "@opentelemetry/instrumentation-http",
                                  "version": "0.53.0"},
                        "spans": spans_json}],
    }]}
    body = json.dumps(doc, separators=(",", ":")).encode()
    offsets = _offsets(body, MARK.hex().encode())
    assert len(offsets) == SPANS_PER_REQUEST, len(offsets)
    times = _time_offsets(body, _times(traces), as_text=True)
    assert len(times) == 2 * SPANS_PER_REQUEST, len(times)
    return Template(body, offsets, times, json=True, spans=SPANS_PER_REQUEST)


_LOG_LINES = (
    (9, "INFO", "GET {route} 200 in {ms} ms"),
    (9, "INFO", "order {n} placed by user {user}"),
    (5, "DEBUG", "cache miss for product {n}, loading from the database"),
    (13, "WARN", "payment provider slow: {ms} ms for order {n}"),
    (17, "ERROR", "could not reserve stock for order {n}: timeout after {ms} ms"),
    (9, "INFO", "sent confirmation email for order {n}"),
)


def logs_proto(seed: int = 0) -> Template:
    """512 log records as the Python SDK's LoggingHandler exports them (a batch of
    its BatchLogRecordProcessor): a string body, the code.* attributes and a couple of
    the application's own, most records inside a trace. Made unique per request as
    trace bodies are: trace ids and times are rewritten (records are keyed by a hash
    of their bytes, so a body sent twice would be stored once)."""
    rng = random.Random(seed)
    service = SERVICES[seed % len(SERVICES)]
    request = ExportLogsServiceRequest()
    rl = request.resource_logs.add()
    rl.resource.attributes.extend(_kv(k, v) for k, v in _resource(service).items())
    sl = rl.scope_logs.add()
    sl.scope.name = "shop.orders"
    times = []
    for slot in range(LOGS_PER_REQUEST // LOGS_PER_TRACE):
        trace_id = MARK + struct.pack(">II", seed, slot)
        for i in range(LOGS_PER_TRACE):
            severity, text, line = rng.choice(_LOG_LINES)
            time_ns = BASE_NS + slot * 7_000_000 + i * 311_000
            times += [time_ns, time_ns + 45_000]
            record = sl.log_records.add(
                time_unix_nano=time_ns, observed_time_unix_nano=time_ns + 45_000,
                severity_number=severity, severity_text=text,  # type: ignore[arg-type]
                trace_id=trace_id, span_id=struct.pack(">Q", i % 3 + 1), flags=1)
            record.body.string_value = line.format(
                route=rng.choice(ROUTES), ms=rng.randrange(1, 900), n=rng.randrange(10**6),
                user=rng.randrange(10**5))
            record.attributes.extend([
                _kv("code.file.path", f"/app/shop/services/module_{slot % 17}.py"),
                _kv("code.function.name", f"handle_{i}"),
                _kv("code.line.number", 40 + i * 7),
                _kv("order.id", rng.randrange(10**6)),
                _kv("tenant", f"tenant-{rng.randrange(50)}")])
    body = request.SerializeToString()
    offsets = _offsets(body, MARK)
    assert len(offsets) == LOGS_PER_REQUEST, len(offsets)
    time_offsets = _time_offsets(body, times, as_text=False)
    assert len(time_offsets) == 2 * LOGS_PER_REQUEST, len(time_offsets)
    return Template(body, offsets, time_offsets, json=False, spans=LOGS_PER_REQUEST)


def _error(rng: random.Random, fingerprint: int) -> dict[str, Any]:
    module = f"shop/services/module_{fingerprint % 97}.py"
    line = 10 + fingerprint % 300
    return {
        "exception_class": rng.choice(("KeyError", "ValueError", "TimeoutError",
                                       "IntegrityError", "ZeroDivisionError")),
        "message": f"order {rng.randrange(10**6)} could not be processed: code {fingerprint}",
        "backtrace": [f"{module}:{line} in handle_{fingerprint}",
                      "shop/services/orders.py:88 in place_order",
                      "shop/api/views.py:141 in post", "flask/app.py:880 in dispatch_request",
                      "flask/app.py:865 in full_dispatch_request"],
        "fingerprint": f"fp-{fingerprint:04d}-{fingerprint * 7919 % 10007:05d}",
        "request_id": f"req-{rng.randrange(10**9):09d}",
        "user_id": f"user-{rng.randrange(10**5)}",
        "params": {"order_id": rng.randrange(10**6), "retry": False, "cart": ["sku-1", "sku-2"]},
        "source_context": {
            "file": module, "lineno": line,
            "context_line": f"        total = order.amount / order.items[{fingerprint % 5}]",
            "pre_context": ["    def handle(self, order):", "        if not order.items:",
                            "            raise ValueError('empty order')"],
            "post_context": ["        return total", "", "    def cancel(self, order):"],
        },
    }


def errors_batch(seed: int = 0) -> bytes:
    rng = random.Random(seed)
    errors = [_error(rng, rng.randrange(FINGERPRINTS)) for _ in range(ERRORS_PER_BATCH)]
    return json.dumps({"errors": errors}, separators=(",", ":")).encode()


def error_single(seed: int = 0) -> bytes:
    rng = random.Random(seed)
    return json.dumps(_error(rng, rng.randrange(FINGERPRINTS)), separators=(",", ":")).encode()


def requests_batch(seed: int = 0) -> bytes:
    rng = random.Random(seed)
    items = []
    for _ in range(REQUESTS_PER_BATCH):
        route = rng.choice(ROUTES)
        items.append({
            "method": rng.choice(("GET", "GET", "GET", "POST", "PUT")),
            "route": route,
            "status": rng.choice((200, 200, 200, 201, 204, 302, 404, 500)),
            "duration_ms": round(rng.lognormvariate(3.0, 1.0), 3),
            "service": SERVICES[rng.randrange(len(SERVICES))],
            "env": "production",
            "request_id": f"req-{rng.randrange(10**9):09d}",
        })
    return json.dumps({"requests": items}, separators=(",", ":")).encode()
