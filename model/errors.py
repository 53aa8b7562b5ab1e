"""Error values with a kind. Receivers map them to status codes in one place
(receiver/status.py); everything else only raises them."""

from __future__ import annotations

from typing import Any


class SoundingError(Exception):
    """Base of every error that Sounding answers a client with."""


class PermanentError(SoundingError):
    """The data is wrong; retrying the same request cannot succeed."""


class InvalidInput(PermanentError):
    """The body does not decode or does not validate (HTTP 400, gRPC INVALID_ARGUMENT)."""

    def __init__(self, message: str, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or []


class Unauthenticated(PermanentError):
    """Missing, malformed or unknown key (HTTP 401, gRPC UNAUTHENTICATED)."""


class Forbidden(PermanentError):
    """A known key used where it does not belong: a key of another project than the
    one the request names (HTTP 403, gRPC PERMISSION_DENIED)."""


class UnsupportedMediaType(PermanentError):
    """Content-Type or Content-Encoding the receiver cannot read (HTTP 415)."""


class PayloadTooLarge(PermanentError):
    """Body, raw or decompressed, above the configured limit (HTTP 413)."""


class RetryableError(SoundingError):
    """A passing condition; the client should retry after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Overloaded(RetryableError):
    """The queue in front of the store is full."""


class StoreUnavailable(RetryableError):
    """The database cannot be reached."""


class RateLimited(RetryableError):
    """A project sent more than its limit allows (HTTP 429, gRPC RESOURCE_EXHAUSTED,
    both with the delay). `categories` are the limited categories of
    model/limits.py (Sentry's doors name them in X-Sentry-Rate-Limits); `outcome`
    is the usage outcome the refused records are counted under: `rate_limited`,
    `over_quota`, or `shed` (a saturated collector refusing the projects above their
    fair share first)."""

    def __init__(self, message: str, retry_after: int = 1,
                 categories: tuple[str, ...] = (), outcome: str = "rate_limited") -> None:
        super().__init__(message, retry_after)
        self.categories = categories
        self.outcome = outcome


class InternalFailure(SoundingError):
    """A request failed on the server side (a processor raised, the decode worker
    handling it died); already logged where it happened, answered HTTP 500 / gRPC
    INTERNAL and not retried elsewhere."""


class ConfigError(Exception):
    """Configuration that cannot work; raised at start, never while serving."""


class PortUnavailable(ConfigError):
    """A listener cannot bind its port (in use, or not permitted). Raised while the
    service binds, before anything is created in the database, so that the operator
    can move the port and start again with nothing lost."""

    def __init__(self, port: int, setting: str, why: str = "is in use") -> None:
        super().__init__(f"port {port} {why} ({setting})")
        self.port = port
        self.setting = setting  # the configuration path that moves it: receivers.http.port
        self.why = why
