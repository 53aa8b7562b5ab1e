"""What one send attempt came to: sent, try again later, or never going to work.

Errors are short fixed words plus a status code ("http 503", "timeout", "smtp 550"):
never a URL, a secret, a password or a server's free text, so they can be stored,
shown in the dashboard and logged as they are.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Sent:
    pass


@dataclass(frozen=True, slots=True)
class Retry:
    """Timeouts, connection errors, 429 and 5xx; `after_s` from Retry-After if given,
    else the sender's backoff decides."""

    after_s: float | None
    error: str


@dataclass(frozen=True, slots=True)
class Failed:
    """The destination refused the message for good (other 4xx, a bad address)."""

    error: str


Outcome = Sent | Retry | Failed
