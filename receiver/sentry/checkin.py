"""A cron monitor check-in, decoded: the payload of an envelope's `check_in` item
(Sentry's SDK developer documentation, "Check-Ins"), or the query and JSON body of
the HTTP check-in door (receiver/sentry/door.py, `CronHandler`). Pure; bad input is
InvalidInput naming every bad field under `field`.

The fields: `check_in_id` (32 hex digits or a dashed UUID; all zeros, or none on
the HTTP door, means "the monitor's latest run in progress"), `monitor_slug`,
`status` (in_progress, ok, error), `duration` in seconds, `environment`,
`release`, `contexts.trace.trace_id`, and `monitor_config`, which creates or
updates the monitor (model/cron.py checks it).
"""

from __future__ import annotations

import math
import uuid
from typing import Any

from model import cron
from model.errors import InvalidInput
from model.records import CheckIn
from receiver.sentry.values import hex_id

NAME_LENGTH = 200  # environment and release
MAX_DURATION_S = 366 * 86400.0
ZERO_ID = "0" * 32


def decode_check_in(payload: dict[str, Any], now_us: int, field: str = "check_in",
                    slug: str | None = None) -> CheckIn:
    """A check-in from its JSON object; `slug` is the one the HTTP door's path names
    (the payload's own is then not needed)."""
    problems: list[dict[str, str]] = []

    def bad(name: str, error: str) -> None:
        problems.append({"field": f"{field}.{name}", "error": error})

    monitor_slug = slug if slug is not None else payload.get("monitor_slug")
    problem = cron.slug_problem(monitor_slug)
    if problem:
        bad("monitor_slug", problem)
    status = payload.get("status")
    if status not in cron.CHECKIN_STATUSES:
        bad("status", f"must be one of {', '.join(cron.CHECKIN_STATUSES)}, got {status!r}")
    raw_id = payload.get("check_in_id")
    zero = isinstance(raw_id, str) and raw_id.replace("-", "") == ZERO_ID
    check_in_id = hex_id(raw_id, 32) if raw_id not in (None, "") and not zero else None
    if raw_id not in (None, "") and not zero and check_in_id is None:
        bad("check_in_id", "must be 32 hex digits or a UUID")
    duration = payload.get("duration")
    if duration is not None and (isinstance(duration, bool)
                                 or not isinstance(duration, int | float)
                                 or not math.isfinite(duration)
                                 or not 0 <= duration <= MAX_DURATION_S):
        bad("duration", f"must be a number of seconds from 0 to {MAX_DURATION_S:.0f}, "
                        f"got {duration!r}")
        duration = None
    names: dict[str, str | None] = {}
    for name in ("environment", "release"):
        value = payload.get(name)
        if value is not None and (not isinstance(value, str) or len(value) > NAME_LENGTH):
            bad(name, f"must be a string of at most {NAME_LENGTH} characters")
            value = None
        names[name] = value or None
    config = None
    if payload.get("monitor_config") is not None:
        try:
            config = cron.parse_config(payload["monitor_config"],
                                       f"{field}.monitor_config").as_dict()
        except InvalidInput as exc:
            problems.extend(exc.details)
    if problems:
        raise InvalidInput("the check-in is invalid", problems)
    latest = check_in_id is None
    return CheckIn(
        check_in_id=uuid.uuid4().hex if latest else str(check_in_id),
        monitor_slug=str(monitor_slug), status=str(status), ts_us=now_us,
        duration_s=None if duration is None else float(duration),
        environment=names["environment"], release=names["release"],
        trace_id=_trace_id(payload.get("contexts")), monitor_config=config, latest=latest)


def _trace_id(contexts: Any) -> str | None:
    trace = contexts.get("trace") if isinstance(contexts, dict) else None
    return hex_id(trace.get("trace_id"), 32) if isinstance(trace, dict) else None


def from_query(query: dict[str, str], body: Any) -> dict[str, Any]:
    """The HTTP door's check-in as one object: the JSON body's members (POST), then
    the query's `status`, `check_in_id`, `environment` and `duration` over them
    (Sentry documents both; a curl one-liner uses the query)."""
    payload: dict[str, Any] = dict(body) if isinstance(body, dict) else {}
    for name in ("status", "check_in_id", "environment", "release"):
        if name in query:
            payload[name] = query[name]
    if "duration" in query:
        try:
            payload["duration"] = float(query["duration"])
        except ValueError:
            payload["duration"] = query["duration"]  # refused by decode_check_in, named
    return payload
