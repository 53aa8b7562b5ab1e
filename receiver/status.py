"""The one place where error kinds become status codes (HTTP here, gRPC too)."""

from __future__ import annotations

from typing import Any

from tornado.web import HTTPError

from sounding.errors import (
    InvalidInput,
    PayloadTooLarge,
    RetryableError,
    Unauthenticated,
    UnsupportedMediaType,
)


def http_error(exc: BaseException | None) -> tuple[int, dict[str, Any], dict[str, str]]:
    """(status, JSON body, extra headers) for an exception raised while serving."""
    if isinstance(exc, InvalidInput):
        return 400, {"error": exc.message, "details": exc.details}, {}
    if isinstance(exc, Unauthenticated):
        return 401, {"error": str(exc)}, {"WWW-Authenticate": 'Bearer realm="sounding"'}
    if isinstance(exc, UnsupportedMediaType):
        return 415, {"error": str(exc)}, {}
    if isinstance(exc, PayloadTooLarge):
        return 413, {"error": str(exc)}, {}
    if isinstance(exc, RetryableError):
        return 503, {"error": str(exc)}, {"Retry-After": str(exc.retry_after)}
    if isinstance(exc, HTTPError):
        message = exc.log_message if exc.log_message and exc.status_code < 500 else None
        return exc.status_code, {"error": message or exc.reason or "error"}, {}
    return 500, {"error": "internal error; the request was not stored"}, {}


def reason_label(status: int) -> str:
    """Short label for the refused-requests metric."""
    return {400: "invalid", 401: "unauthenticated", 405: "method", 413: "too_large",
            415: "media_type", 503: "unavailable"}.get(status, str(status))
