"""Pure decode functions for Sounding's own JSON endpoints: errors, deploys and
request metrics. JSON value in, records out, or InvalidInput naming every
offending field. No I/O, so the gRPC receiver applies exactly the same rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from model.errors import InvalidInput
from model.records import Deploy, ErrorEvent, RequestMetric, SourceContext
from model.timeutil import MAX_NS
from receiver import fields
from receiver.custom import error_details
from receiver.fields import Problems
from receiver.sentry.values import MAX_LABEL, MAX_TAG_KEY, MAX_TAG_VALUE, MAX_TAGS

MAX_BATCH_ERRORS = 1_000
MAX_BATCH_REQUESTS = 10_000
MAX_FINGERPRINT = 255
MAX_GIT_SHA = 128
# MAX_LABEL (env, service, an error's environment and release) and the tag limits are
# what an error keeps from any door: receiver/sentry/values.py holds them.
MAX_METHOD = 16
MAX_ROUTE = 500
# The longest time the accepted range holds (2^63 - 1 ns): the rollups' sums and
# histogram buckets stay finite and in range however many requests add up.
MAX_DURATION_MS = MAX_NS / 1e6

# An error's optional labels (docs/sending-data.md, "Environments, releases and tags on errors").
_LABELS = frozenset({"environment", "release", "service", "tags"})

TraceLink = tuple[str, str] | None
T = TypeVar("T")


def _source_context(obj: dict[str, Any], problems: Problems) -> SourceContext | None:
    raw = fields.obj_field(obj, "source_context", problems)
    if raw is None:
        return None
    sub = Problems(f"{problems.prefix}source_context.")
    file = fields.string(raw, "file", sub, required=True)
    lineno = fields.integer(raw, "lineno", sub, required=True, minimum=0, maximum=2**31 - 1)
    context_line = raw.get("context_line")
    if context_line is None:
        sub.add("context_line", "is required")
    elif not isinstance(context_line, str):
        sub.add("context_line", f"must be a string, got {fields.type_name(context_line)}")
    pre = fields.string_list(raw, "pre_context", sub)
    post = fields.string_list(raw, "post_context", sub)
    problems.items.extend(sub.items)
    if sub:
        return None
    assert file is not None and lineno is not None and isinstance(context_line, str)
    return SourceContext(file, lineno, context_line, pre or [], post or [])


def decode_error(obj: Any, now_us: int, link: TraceLink, prefix: str = "") -> ErrorEvent:
    problems = Problems(prefix)
    if not isinstance(obj, dict):
        raise InvalidInput("an error record must be a JSON object",
                           [{"field": prefix.rstrip(".") or "body",
                             "error": f"must be an object, got {fields.type_name(obj)}"}])
    exception_class = fields.string(obj, "exception_class", problems, required=True)
    message = obj.get("message")
    if message is None:
        problems.add("message", "is required")
    elif not isinstance(message, str):
        problems.add("message", f"must be a string, got {fields.type_name(message)}")
    backtrace = fields.string_list(obj, "backtrace", problems, required=True)
    fingerprint = fields.string(obj, "fingerprint", problems, required=True,
                                max_len=MAX_FINGERPRINT)
    request_id = fields.string(obj, "request_id", problems)
    user_id = fields.string(obj, "user_id", problems)
    params = fields.free_object(obj, "params", problems)
    ts_us = fields.timestamp_us(obj, "timestamp", problems, now_us)
    source_context = _source_context(obj, problems)
    trace_id = fields.hex_id(obj, "trace_id", problems, 32)
    span_id = fields.hex_id(obj, "span_id", problems, 16)
    labelled = not obj.keys().isdisjoint(_LABELS)  # one test for the errors without any
    if labelled:
        environment = fields.string(obj, "environment", problems, max_len=MAX_LABEL)
        release = fields.string(obj, "release", problems, max_len=MAX_LABEL)
        service = fields.string(obj, "service", problems, max_len=MAX_LABEL)
        tags = fields.string_map(obj, "tags", problems, max_keys=MAX_TAGS,
                                 max_key=MAX_TAG_KEY, max_value=MAX_TAG_VALUE)
    detailed = not obj.keys().isdisjoint(error_details.NAMES)
    if detailed:
        details = error_details.decode_details(obj, problems)
    if problems:
        raise InvalidInput("invalid error record", problems.items)
    assert exception_class is not None and isinstance(message, str)
    assert backtrace is not None and fingerprint is not None
    if trace_id is None and link is not None:
        trace_id, span_id = link
    error = ErrorEvent(
        fingerprint=fingerprint, exception_class=exception_class, message=message,
        backtrace=backtrace, ts_us=ts_us, request_id=request_id, user_id=user_id, params=params,
        source_context=source_context, trace_id=trace_id, span_id=span_id)
    if labelled:  # set apart: four more keywords cost every error a tenth of a microsecond
        error.environment, error.release = environment or None, release or None
        error.service, error.tags = service or None, tags
    if detailed:  # level, exceptions, context and event_id: receiver/custom/error_details.py
        error.level, error.exceptions, error.context, error.occurrence_key = details
    return error


def decode_deploy(obj: Any, now_us: int) -> Deploy:
    if not isinstance(obj, dict):
        raise InvalidInput("a deploy record must be a JSON object",
                           [{"field": "body", "error": f"must be an object, got "
                                                       f"{fields.type_name(obj)}"}])
    problems = Problems()
    git_sha = fields.string(obj, "git_sha", problems, required=True, max_len=MAX_GIT_SHA)
    version = fields.string(obj, "version", problems)
    env = fields.string(obj, "env", problems, max_len=MAX_LABEL)
    deployer = fields.string(obj, "deployer", problems)
    description = fields.string(obj, "description", problems)
    service = fields.string(obj, "service", problems, max_len=MAX_LABEL)
    ts_us = fields.timestamp_us(obj, "timestamp", problems, now_us)
    if problems:
        raise InvalidInput("invalid deploy record", problems.items)
    assert git_sha is not None
    return Deploy(git_sha=git_sha.strip(), ts_us=ts_us, version=version, env=env,
                  deployer=deployer, description=description,
                  # "" names no service: like an absent one, every service's requests count.
                  service=service or None)


def decode_request_metric(obj: Any, now_us: int, link: TraceLink,
                          prefix: str = "") -> RequestMetric:
    problems = Problems(prefix)
    if not isinstance(obj, dict):
        raise InvalidInput("a request metric must be a JSON object",
                           [{"field": prefix.rstrip(".") or "body",
                             "error": f"must be an object, got {fields.type_name(obj)}"}])
    method = fields.string(obj, "method", problems, required=True, max_len=MAX_METHOD)
    route: str | None = None
    if obj.get("route") is None and obj.get("path") is None:
        problems.add("route", "is required (or give path)")
    else:
        route_name = "route" if obj.get("route") is not None else "path"
        route = fields.string(obj, route_name, problems, non_empty=True, max_len=MAX_ROUTE)
    status = fields.integer(obj, "status", problems, required=True, minimum=100, maximum=599)
    duration_ms = fields.number(obj, "duration_ms", problems, required=True,
                                maximum=MAX_DURATION_MS)
    ts_us = fields.timestamp_us(obj, "timestamp", problems, now_us)
    service = fields.string(obj, "service", problems, max_len=MAX_LABEL)
    env = fields.string(obj, "env", problems, max_len=MAX_LABEL)
    request_id = fields.string(obj, "request_id", problems)
    trace_id = fields.hex_id(obj, "trace_id", problems, 32)
    if problems:
        raise InvalidInput("invalid request metric", problems.items)
    assert method is not None and route is not None
    assert status is not None and duration_ms is not None
    if trace_id is None and link is not None:
        trace_id = link[0]
    return RequestMetric(method=method.upper(), route=route, status=status,
                         duration_ms=duration_ms, ts_us=ts_us, service=service or "",
                         env=env or "", request_id=request_id, trace_id=trace_id)


Rejected = list[dict[str, Any]]


def decode_items(obj: Any, member: str, limit: int,
                 decode: Callable[[Any, str], T]) -> tuple[list[T], Rejected]:
    """Decode `obj[member]` item by item: (valid records, rejected items with reasons).

    The envelope must be right (an object whose member is a non-empty array within
    the limit); when every item is invalid, the whole request is InvalidInput.
    """
    if not isinstance(obj, dict):
        raise InvalidInput(f"the body must be a JSON object with a member {member!r}",
                           [{"field": "body",
                             "error": f"must be an object, got {fields.type_name(obj)}"}])
    items = obj.get(member)
    if not isinstance(items, list):
        raise InvalidInput(f"{member!r} must be an array",
                           [{"field": member, "error": "is required and must be an array"
                             if items is None else
                             f"must be an array, got {fields.type_name(items)}"}])
    if not items:
        raise InvalidInput(f"{member!r} is empty",
                           [{"field": member, "error": "must hold at least one item"}])
    if len(items) > limit:
        raise InvalidInput(f"too many items in {member!r}",
                           [{"field": member,
                             "error": f"must hold at most {limit} items, got {len(items)}"}])
    records: list[T] = []
    rejected: Rejected = []
    for index, item in enumerate(items):
        try:
            records.append(decode(item, f"{member}[{index}]."))
        except InvalidInput as exc:
            rejected.append({"index": index, "details": exc.details})
    if not records:
        raise InvalidInput(f"every item in {member!r} is invalid",
                           [d for r in rejected for d in r["details"]])
    return records, rejected


def decode_error_batch(obj: Any, now_us: int, link: TraceLink
                       ) -> tuple[list[ErrorEvent], Rejected]:
    return decode_items(obj, "errors", MAX_BATCH_ERRORS,
                        lambda item, prefix: decode_error(item, now_us, link, prefix))


def decode_request_batch(obj: Any, now_us: int, link: TraceLink
                         ) -> tuple[list[RequestMetric], Rejected]:
    return decode_items(obj, "requests", MAX_BATCH_REQUESTS,
                        lambda item, prefix: decode_request_metric(item, now_us, link, prefix))
