"""The webhook signature: HMAC-SHA256 over the timestamp and the body.

Every webhook POST carries

    Sounding-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>

The recipe a receiver follows (docs/alerts.md, "Verifying the signature"):

1. Split the header on "," into key=value pairs; take `t` and every `v1`.
2. Compute HMAC-SHA256 with the destination's secret (UTF-8) as the key over the
   bytes `<t>.` followed by the raw request body, exactly as received, and write it
   as lowercase hex.
3. Accept only if it equals one of the `v1` values (compare in constant time) and
   `t` is within 5 minutes of the receiver's clock.

Signing the timestamp with the body is what makes a replay refusable: an attacker who
captured a request cannot move `t` forward without the secret. Several `v1` values
are allowed so that a secret can be rotated without a gap (not sent today).
"""

from __future__ import annotations

import hashlib
import hmac

HEADER = "Sounding-Signature"
TOLERANCE_S = 300


def _digest(secret: str, body: bytes, t: int) -> str:
    return hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()


def sign(secret: str, body: bytes, t: int) -> str:
    """The header value for `body` sent at unix time `t` (whole seconds)."""
    return f"t={t},v1={_digest(secret, body, t)}"


def verify(secret: str, body: bytes, header: str, now: float,
           tolerance_s: float = TOLERANCE_S) -> bool:
    """Whether `header` signs `body` with `secret`, at a time within `tolerance_s` of
    `now` (either side: a timestamp from the future is as suspect as an old one)."""
    t: int | None = None
    signatures: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            t = int(value)
        elif key == "v1":
            signatures.append(value)
    if t is None or not signatures or abs(now - t) > tolerance_s:
        return False
    expected = _digest(secret, body, t).encode()
    # Every candidate is compared, in constant time each, so the time taken says
    # nothing about which one was close. Bytes: a header may hold any character.
    return any([hmac.compare_digest(expected, candidate.encode(errors="replace"))
                for candidate in signatures])
