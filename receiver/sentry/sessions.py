"""Sentry's release-health items, read into what each adds to its release's health
(model.records.SessionCount), each under a mark that makes it count once.

- `session`: one session's state, sent when it starts (`init: true`), when it
  changes (an error, a crash) and when it ends. Its `sid` gives two marks: its
  start (counted by the first update seen, `init` or not: Sentry's protocol says a
  session need not have been started to crash) and its end (counted by the first
  update with a final status: exited, crashed or abnormal, or Sentry's `errored`).
  A later update of the same session, or the same update again, adds nothing.
  An `ok` update with errors ends nothing: the session is still running, and its
  final update says how it ended (an exit with errors is `errored`).
- `sessions`: buckets of sessions already counted by the SDK (server mode: one per
  request), per start minute and distinct id, each with its exited, errored,
  crashed and abnormal counts. Sentry gives a bucket no id: its mark is a hash of
  the envelope's bytes, the item's place and the bucket's, so that the same
  envelope sent again (a retry) adds nothing. Two envelopes of exactly the same
  bytes are taken for one sent twice: see docs/release-health.md, "Counted once".

A session belongs to the minute it started in. Sentry requires a release: an item
without one, with no start time, or with counts that are not whole numbers >= 0,
adds nothing (counted as dropped by the door, never refused: an SDK must not see
an error for its sessions).
"""

from __future__ import annotations

import hashlib
from typing import Any

from model.records import SessionCount
from receiver.sentry.values import MAX_LABEL, text, time_us

# Final statuses of a session update, and the outcome each is counted as.
_ENDS = {"exited": "exited", "crashed": "crashed", "abnormal": "abnormal",
         "errored": "errored"}
_OUTCOMES = ("exited", "errored", "crashed", "abnormal")
# A bucket's counts above this are taken as garbage, not as sessions.
MAX_COUNT = 1_000_000_000
# Buckets read from one `sessions` item (the SDKs send one a minute per release).
MAX_BUCKETS = 1000


def mark(*parts: str | bytes) -> bytes:
    """16 bytes of BLAKE2b over the parts, each length-prefixed (no two lists of
    parts give the same input)."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(4, "big"))
        h.update(data)
    return h.digest()


def _attrs(payload: dict[str, Any]) -> tuple[str, str] | None:
    """(release, environment) of an item's `attrs`, or None without a release."""
    attrs = payload.get("attrs")
    if not isinstance(attrs, dict):
        return None
    release = text(attrs.get("release"), MAX_LABEL)
    if release is None or not release.strip():
        return None
    return release, text(attrs.get("environment"), MAX_LABEL) or ""


def _minute(value: Any) -> int | None:
    ts = time_us(value)
    return None if ts is None else ts // 60_000_000 * 60


def decode_session(payload: dict[str, Any]) -> list[SessionCount]:
    """What one `session` update adds: its start, its end when final; [] when it
    cannot be counted (no sid, release or start time)."""
    sid = text(payload.get("sid"), 100)
    attrs = _attrs(payload)
    started_s = _minute(payload.get("started"))
    if sid is None or attrs is None or started_s is None:
        return []
    release, environment = attrs
    user = text(payload.get("did"), MAX_LABEL) or ""
    counts = [SessionCount(mark("session-start", sid), release, environment, started_s,
                           user, started=1)]
    status = payload.get("status")
    outcome = _ENDS.get(status) if isinstance(status, str) else None
    if outcome == "exited" and _errors(payload.get("errors")) > 0:
        outcome = "errored"
    if outcome is not None:
        end = SessionCount(mark("session-end", sid), release, environment, started_s, user)
        setattr(end, outcome, 1)
        counts.append(end)
    return counts


def _errors(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def decode_sessions(payload: dict[str, Any], envelope_digest: bytes, index: int
                    ) -> list[SessionCount]:
    """What one `sessions` item adds: one count per bucket that can be counted.
    `envelope_digest` identifies the envelope's bytes, `index` the item's place."""
    attrs = _attrs(payload)
    buckets = payload.get("aggregates")
    if attrs is None or not isinstance(buckets, list):
        return []
    release, environment = attrs
    counts = []
    for position, bucket in enumerate(buckets[:MAX_BUCKETS]):
        if not isinstance(bucket, dict):
            continue
        started_s = _minute(bucket.get("started"))
        numbers = [bucket.get(name, 0) for name in _OUTCOMES]
        if started_s is None or not all(
                type(n) is int and 0 <= n <= MAX_COUNT for n in numbers):
            continue
        exited, errored, crashed, abnormal = numbers
        total = exited + errored + crashed + abnormal
        if total == 0:
            continue
        counts.append(SessionCount(
            mark("sessions", envelope_digest, str(index), str(position)), release,
            environment, started_s, text(bucket.get("did"), MAX_LABEL) or "",
            started=total, exited=exited, errored=errored, crashed=crashed,
            abnormal=abnormal))
    return counts


def envelope_digest(body: bytes) -> bytes:
    """What names an envelope's bytes in its buckets' marks."""
    return hashlib.blake2b(body, digest_size=16).digest()
