"""What a Sentry span says, in OpenTelemetry's terms: its kind from its `op`, its status
from Sentry's span status, and its attributes, with the semantic-convention names that
processors/classify.py reads (so that a Sentry database span is a database span on the
performance page, as an OpenTelemetry one is). Shared by both forms a Sentry SDK sends
spans in: a `transaction` item (receiver/sentry/transaction.py) and the span stream
(`span` items, receiver/sentry/span_stream.py). Pure; only span_times_ns raises, a
Drop for the one span whose times cannot be read."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from receiver.otlp.json_rules import MAX_DROP_REASONS, Drop, Dropped
from receiver.sentry.values import MAX_TAG_KEY, text, time_us

T = TypeVar("T")

# Sentry's own limit on the spans of one transaction, and of one `span` item; the rest
# are dropped (counted).
MAX_SPANS = 1000
SCOPE = "sentry"  # the instrumentation scope every Sentry span is stored under
# Sources of a transaction's (a segment's) name that mean it is the request's route or
# path (transaction_info.source, or the span stream's sentry.span.source).
ROUTE_SOURCES = frozenset({"route", "url"})

# Span kinds and status codes, as OTLP numbers them.
INTERNAL, SERVER, CLIENT, PRODUCER, CONSUMER = 1, 2, 3, 4, 5
STATUS_UNSET, STATUS_ERROR = 0, 2

# What one span keeps, at most. OpenTelemetry's SDKs keep 128 attributes by default;
# a value is cut at 8 KiB (a long SQL statement stays readable, a dump does not).
MAX_ATTRIBUTES = 128
MAX_VALUE = 8192
MAX_LIST = 128
MAX_NAME = 2048
MAX_STATUS_MESSAGE = 200
_INT64 = range(-(2**63), 2**63)

# The first segment of an op names what the span does (Sentry's span operation
# conventions: "db.sql.query", "http.client", "queue.publish"...).
_CLIENT_OPS = frozenset({"db", "cache", "rpc", "grpc", "redis", "mongodb", "elasticsearch"})
_PRODUCER_VERBS = frozenset({"publish", "create", "submit", "send"})
_CONSUMER_VERBS = frozenset({"process", "receive", "task"})
# An OpenTelemetry-based SDK (@sentry/node) says the kind itself: `otel.kind` in a
# transaction's `data` ("SERVER"), `sentry.kind` in a streamed span's attributes
# ("server").
_KIND_ATTRIBUTES = ("otel.kind", "sentry.kind")
_OTEL_KINDS = {"INTERNAL": INTERNAL, "SERVER": SERVER, "CLIENT": CLIENT,
               "PRODUCER": PRODUCER, "CONSUMER": CONSUMER}
_SQL_VERBS = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "UPSERT", "MERGE", "CREATE",
                        "DROP", "ALTER", "BEGIN", "COMMIT", "ROLLBACK", "WITH", "SET",
                        "SHOW", "EXPLAIN", "TRUNCATE", "CALL", "COPY"})


def kind_of(op: str | None, data: dict[str, Any]) -> int:
    for name in _KIND_ATTRIBUTES:
        declared = data.get(name)
        if isinstance(declared, str) and declared.upper() in _OTEL_KINDS:
            return _OTEL_KINDS[declared.upper()]
    if not op:
        return INTERNAL
    parts = op.lower().split(".")
    if parts[-1] == "server" or parts[:2] == ["http", "server"]:
        return SERVER  # http.server, grpc.server, websocket.server
    if parts[-1] == "client" or parts[:2] == ["http", "client"] or parts[0] in _CLIENT_OPS:
        return CLIENT  # http.client, db.sql.query, cache.get, rpc
    if parts[0] == "queue" and len(parts) > 1:
        if parts[1] in _PRODUCER_VERBS:
            return PRODUCER  # queue.publish, queue.submit.celery
        if parts[1] in _CONSUMER_VERBS:
            return CONSUMER  # queue.process, queue.task.celery
    return INTERNAL


def status_of(sentry_status: Any, http_status: int | None) -> tuple[int, str]:
    """(OTLP status code, message). Sentry's `ok` or no status is unset; any other
    Sentry status (internal_error, not_found...) is an error named by it. An HTTP
    status of 500 or more is an error too, as OpenTelemetry's server rule says."""
    status = text(sentry_status, MAX_STATUS_MESSAGE)
    if status is not None and status.lower() not in ("ok", "unset"):
        return STATUS_ERROR, status
    if http_status is not None and http_status >= 500:
        return STATUS_ERROR, ""
    return STATUS_UNSET, ""


def span_times_ns(start: Any, end: Any, end_name: str) -> tuple[int, int]:
    """(start, end) in epoch nanoseconds of a span's `start_timestamp` and its end
    (`timestamp` in a transaction, `end_timestamp` in the span stream); Drop when
    either cannot be read or the span ends before it starts."""
    start_us, end_us = time_us(start), time_us(end)
    if start_us is None or end_us is None:
        raise Drop(f"start_timestamp and {end_name} must be times (seconds or RFC 3339)")
    if start_us > end_us:
        raise Drop(f"start_timestamp is after {end_name}")
    return start_us * 1000, end_us * 1000


def drop_beyond_limit(out: Dropped, total: int, where: str, limit: int = MAX_SPANS) -> None:
    """Counts the records past `limit` of one item as dropped: the spans of a
    transaction or a `span` item, the logs of a `log` item, the metrics of a
    `trace_metric` item."""
    if total > limit:
        out.dropped += total - limit
        if len(out.reasons) < MAX_DROP_REASONS:
            out.reasons.append(f"{where}: more than {limit} in one item")


def read_items(payload: Any, item_type: str, out: Dropped,
               read: Callable[[Any, dict[Any, Any]], T], into: list[T], limit: int) -> None:
    """The records of one batch item (`span`, `log`, `trace_metric`: `{"version": 2,
    "items": [...]}`) read one by one into `into`, in the order sent: a record `read`
    refuses (Drop) is dropped alone with its reason (`items[i]: ...`), those past `limit`
    are counted as dropped, and a payload without an items list is one record dropped.
    `read` gets the request's resources too, so that records alike share one dict."""
    items = payload.get("items") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        out.drop(item_type, "the payload must be an object with an items list")
        return
    known: dict[Any, Any] = {}
    for index, item in enumerate(items[:limit]):
        try:
            into.append(read(item, known))
        except Drop as exc:
            out.drop(f"items[{index}]", str(exc))
    drop_beyond_limit(out, len(items), "items", limit)


def http_status_of(*values: Any) -> int | None:
    """The first HTTP status code among `values` (a number or its decimal text)."""
    for value in values:
        if isinstance(value, bool):
            continue
        if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and 100 <= value <= 999:
            return value
    return None


def _scalar(value: Any) -> Any:
    """An attribute value OTLP can carry as a scalar, or None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if value in _INT64 else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return value[:MAX_VALUE]
    return None


def attribute_value(value: Any) -> Any:
    """A `data` value as an attribute: scalars and lists of scalars as they are,
    anything else as its JSON text (OTLP's attribute arrays hold scalars only); None
    for what has no value."""
    if value is None:
        return None
    scalar = _scalar(value)
    if scalar is not None:
        return scalar
    if isinstance(value, list) and len(value) <= MAX_LIST:
        items = [_scalar(item) for item in value]
        if all(item is not None for item in items):
            return items
    try:
        shown = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return None
    return shown[:MAX_VALUE]


class Attributes:
    """A span's attributes being built: bounded in count and key length; `put` keeps
    the first value given for a key, so that what the sender said wins over what
    Sounding derives (put the sender's first)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def put(self, key: Any, value: Any) -> None:
        if len(self.values) >= MAX_ATTRIBUTES or not isinstance(key, str) or not key:
            return
        key = key[:MAX_TAG_KEY]
        if key in self.values:
            return
        shown = attribute_value(value)
        if shown is not None:
            self.values[key] = shown

    def put_all(self, values: Any) -> None:
        if isinstance(values, dict):
            for key, value in values.items():
                self.put(key, value)


def route_of(name: str) -> str:
    """The route a transaction's (a segment's) name gives when its source is a route or
    a URL (ROUTE_SOURCES): the name, without the HTTP method it may start with.
    @sentry/node names a server span "GET /orders/:id" as OpenTelemetry does, and so
    does a sentry-sdk 3 application naming its segment after the request; the route
    is what follows the method, as `http.route` is "/orders/:id"."""
    method, _, rest = name.partition(" ")
    if rest.startswith("/") and method.isascii() and method.isalpha() and method.isupper():
        return rest
    return name


def split_http_description(description: str) -> tuple[str | None, str | None]:
    """(method, url) of an http.client span's description, "GET https://host/path"."""
    method, _, url = description.strip().partition(" ")
    if not url or not method.isascii() or not method.isalpha() or len(method) > 16:
        return None, None
    return method.upper(), url.strip() or None


def sql_operation(statement: str) -> str | None:
    """The verb a SQL statement starts with (SELECT, INSERT...), if it is one."""
    head = statement.lstrip(" \t\r\n(").split(None, 1)
    if head and head[0].upper() in _SQL_VERBS:
        return head[0].upper()
    return None


def add_semantics(attributes: Attributes, op: str | None, description: str | None) -> None:
    """The semantic-convention attributes a span's op and description imply, for
    client spans (the transaction's own are added by the transaction decoder)."""
    op = (op or "").lower()
    if op.startswith("http.client"):
        values = attributes.values
        method, url = split_http_description(description or "")
        if not ({"url.full", "http.url"} & values.keys()):
            # The Python SDK puts the URL in `data.url`, the others in the description.
            attributes.put("url.full", values.get("url") or url)
        if method is not None and not ({"http.request.method", "http.method"}
                                       & values.keys()):
            attributes.put("http.request.method", method)
    elif op == "db" or op.startswith("db."):
        values = attributes.values
        if "db.system" not in values and "db.system.name" not in values:
            # classify.py calls a span with a database system a database span; a
            # Sentry db span that did not say which system is one all the same.
            attributes.put("db.system.name", "other_sql" if ".sql" in op else "other")
        if description and not ({"db.statement", "db.query.text"} & values.keys()):
            attributes.put("db.query.text", description)
        statement = values.get("db.query.text") or values.get("db.statement")
        if isinstance(statement, str) and not ({"db.operation", "db.operation.name"}
                                               & values.keys()):
            verb = sql_operation(statement)
            if verb is not None:
                attributes.put("db.operation.name", verb)
