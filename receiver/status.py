"""The one place where error kinds become status codes: HTTP, and gRPC below."""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from tornado.web import HTTPError

from model import limits as lim
from model.errors import (
    Forbidden,
    InvalidInput,
    Overloaded,
    PayloadTooLarge,
    RateLimited,
    RetryableError,
    Unauthenticated,
    UnsupportedMediaType,
)
from model.limits import sentry_categories


def http_error(exc: BaseException | None) -> tuple[int, dict[str, Any], dict[str, str]]:
    """(status, JSON body, extra headers) for an exception raised while serving."""
    if isinstance(exc, InvalidInput):
        return 400, {"error": exc.message, "details": exc.details}, {}
    if isinstance(exc, Unauthenticated):
        return 401, {"error": str(exc)}, {"WWW-Authenticate": 'Bearer realm="sounding"'}
    if isinstance(exc, Forbidden):
        return 403, {"error": str(exc)}, {}
    if isinstance(exc, UnsupportedMediaType):
        return 415, {"error": str(exc)}, {}
    if isinstance(exc, PayloadTooLarge):
        return 413, {"error": str(exc)}, {}
    if isinstance(exc, RateLimited):
        return 429, {"error": str(exc)}, {"Retry-After": str(max(int(exc.retry_after), 1))}
    if isinstance(exc, RetryableError):
        return 503, {"error": str(exc)}, {"Retry-After": str(exc.retry_after)}
    if isinstance(exc, HTTPError):
        message = exc.log_message if exc.log_message and exc.status_code < 500 else None
        return exc.status_code, {"error": message or exc.reason or "error"}, {}
    return 500, {"error": "internal error; the request was not stored"}, {}


def sentry_http_error(exc: BaseException | None
                      ) -> tuple[int, dict[str, Any], dict[str, str]]:
    """The Sentry door's answers (receiver/sentry/door.py): Sentry's own forms, which
    its SDKs act on. Overload and an unreachable store are 429 with `Retry-After` and
    `X-Sentry-Rate-Limits` (`<seconds>:<categories>:<scope>:<reason>`; no category
    means all): the SDKs stop sending for that long instead of retrying at once,
    where a 503 makes them drop the envelope and carry on. The body is Relay's
    `{"detail": ..., "causes": [...]}`, which the SDKs log as they receive it."""
    status, body, headers = http_error(exc)
    if isinstance(exc, RateLimited):
        # The project's limit: only its categories (an SDK keeps sending the others).
        seconds = max(int(exc.retry_after), 1)
        categories = sentry_categories(exc.categories) if lim.BYTES not in exc.categories else ""
        return 429, {"detail": str(exc)}, {
            "Retry-After": str(seconds),
            "X-Sentry-Rate-Limits": f"{seconds}:{categories}:project:{exc.outcome}"}
    if isinstance(exc, RetryableError):
        seconds = max(int(exc.retry_after), 1)
        reason = "overloaded" if isinstance(exc, Overloaded) else "unavailable"
        return 429, {"detail": str(exc)}, {
            "Retry-After": str(seconds),
            "X-Sentry-Rate-Limits": f"{seconds}::organization:{reason}"}
    if status == 401:
        headers = {"WWW-Authenticate": 'Sentry realm="sounding"'}
    answer: dict[str, Any] = {"detail": body["error"]}
    if isinstance(exc, InvalidInput) and exc.details:
        answer["causes"] = [f"{d.get('field')}: {d.get('error')}" for d in exc.details]
    return status, answer, headers


def reason_label(status: int, exc: BaseException | None = None) -> str:
    """Short label for the refused-requests metric. The Sentry door's 429 is the other
    doors' 503: both are shedding; a project's limit is its outcome (rate_limited,
    over_quota, shed)."""
    if isinstance(exc, RateLimited):
        return exc.outcome
    return {400: "invalid", 401: "unauthenticated", 403: "forbidden", 405: "method",
            413: "too_large", 415: "media_type", 429: "unavailable",
            503: "unavailable"}.get(status, str(status))


GrpcTrailers = tuple[tuple[str, str | bytes], ...]
MAX_GRPC_PROBLEMS = 10
MAX_GRPC_MESSAGE = 1024


def grpc_error(exc: BaseException) -> tuple[grpc.StatusCode, str, GrpcTrailers]:
    """(status code, message, trailing metadata) for an exception raised while serving.

    A retryable error carries its delay twice, because exporters read it in two
    places: a google.rpc.RetryInfo inside the google.rpc.Status of
    `grpc-status-details-bin` (the Go exporters, so the Collector), and the same
    RetryInfo alone in `google.rpc.retryinfo-bin` (the Python exporter).
    """
    if isinstance(exc, InvalidInput):
        # Trailers share the client's metadata limit (8 KiB by default): keep them short.
        shown = exc.details[:MAX_GRPC_PROBLEMS]
        problems = "; ".join(f"{d.get('field')}: {d.get('error')}" for d in shown)
        message = (f"{exc.message}: {problems}" if problems else exc.message)[:MAX_GRPC_MESSAGE]
        violations = error_details_pb2.BadRequest(field_violations=[
            error_details_pb2.BadRequest.FieldViolation(
                field=str(d.get("field", ""))[:200], description=str(d.get("error", ""))[:200])
            for d in shown])
        return _with_details(grpc.StatusCode.INVALID_ARGUMENT, code_pb2.INVALID_ARGUMENT,
                             message, [violations])
    if isinstance(exc, Unauthenticated):
        return grpc.StatusCode.UNAUTHENTICATED, str(exc), ()
    if isinstance(exc, Forbidden):
        return grpc.StatusCode.PERMISSION_DENIED, str(exc), ()
    if isinstance(exc, PayloadTooLarge):
        return grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc), ()
    if isinstance(exc, RetryableError):
        retry = error_details_pb2.RetryInfo(
            retry_delay=duration_pb2.Duration(seconds=max(int(exc.retry_after), 0)))
        # A project over its limit is RESOURCE_EXHAUSTED (the OTLP specification's
        # throttling, retryable with the RetryInfo's delay), the collector's own
        # trouble UNAVAILABLE.
        code, number = ((grpc.StatusCode.RESOURCE_EXHAUSTED, code_pb2.RESOURCE_EXHAUSTED)
                        if isinstance(exc, RateLimited)
                        else (grpc.StatusCode.UNAVAILABLE, code_pb2.UNAVAILABLE))
        code, message, trailers = _with_details(code, number, str(exc), [retry])
        return code, message, (*trailers, ("google.rpc.retryinfo-bin", retry.SerializeToString()))
    return grpc.StatusCode.INTERNAL, "internal error; the request was not stored", ()


def _with_details(code: grpc.StatusCode, number: int, message: str,
                  details: list[Any]) -> tuple[grpc.StatusCode, str, GrpcTrailers]:
    status = status_pb2.Status(code=number, message=message)
    for detail in details:
        status.details.add().Pack(detail)
    return code, message, (("grpc-status-details-bin", status.SerializeToString()),)
