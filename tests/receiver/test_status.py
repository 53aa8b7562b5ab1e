"""receiver/status.py: the Sentry door's forms of the error kinds."""

from __future__ import annotations

from model.errors import (
    Forbidden,
    InvalidInput,
    Overloaded,
    StoreUnavailable,
    Unauthenticated,
)
from receiver.status import http_error, sentry_http_error


def test_retryable_errors_are_429_with_both_rate_limit_headers() -> None:
    status, body, headers = sentry_http_error(StoreUnavailable("the store is down", 5))
    assert status == 429
    assert body == {"detail": "the store is down"}
    assert headers == {"Retry-After": "5", "X-Sentry-Rate-Limits": "5::organization:unavailable"}
    _, _, headers = sentry_http_error(Overloaded("busy", 0))
    # Sentry's SDKs read a whole number of seconds; 0 would not slow them down.
    assert headers["X-Sentry-Rate-Limits"] == "1::organization:overloaded"


def test_auth_errors_keep_their_statuses_in_sentry_form() -> None:
    status, body, headers = sentry_http_error(Unauthenticated("unknown"))
    assert (status, body) == (401, {"detail": "unknown"})
    assert headers["WWW-Authenticate"].startswith("Sentry")
    assert sentry_http_error(Forbidden("not yours"))[:2] == (403, {"detail": "not yours"})
    assert http_error(Forbidden("not yours"))[0] == 403


def test_invalid_input_lists_its_causes() -> None:
    exc = InvalidInput("the envelope is malformed",
                       [{"field": "items[2].length", "error": "too long"}])
    assert sentry_http_error(exc)[1] == {"detail": "the envelope is malformed",
                                         "causes": ["items[2].length: too long"]}


def test_anything_else_is_500_without_details() -> None:
    status, body, _ = sentry_http_error(RuntimeError("secret internals"))
    assert status == 500
    assert "secret" not in body["detail"]
