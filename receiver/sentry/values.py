"""How Sentry's loosely typed values are read, shared by the event and transaction
decoders. Sentry normalises what an SDK sends instead of refusing it, and SDKs never
expect an error for a field: so these readers return a value or a default, and never
raise. Only the envelope's framing (receiver/sentry/envelope.py) is refused."""

from __future__ import annotations

import math
from typing import Any

from model.timeutil import MAX_US, parse_iso8601_us

# What one error keeps, at most (Sentry's own limits are of the same order).
MAX_TAGS = 50
MAX_TAG_KEY = 200
MAX_TAG_VALUE = 200
MAX_LABEL = 200  # environment, release, service, level

# Where a span or an error says which service it came from, first found wins: Sentry
# has no service, so Sounding reads a `service` tag (sentry_sdk.set_tag("service",
# ...)), then the resource an OpenTelemetry-bridged SDK puts in `contexts.otel`.
SERVICE_TAGS = ("service", "service.name")
UNKNOWN_SERVICE = "unknown_service:"  # + the event's platform, as OpenTelemetry names one
_HEX = frozenset("0123456789abcdef")


def text(value: Any, limit: int = MAX_LABEL) -> str | None:
    """A string value, cut at `limit`; numbers and booleans as Sentry prints them;
    None for anything else, and for an empty string."""
    if type(value) is str:  # nearly always: the rest is for what an SDK got wrong
        return (value if len(value) <= limit else value[:limit]) or None
    if isinstance(value, bool):
        value = "True" if value else "False"
    elif isinstance(value, int | float) and not (isinstance(value, float)
                                                 and not math.isfinite(value)):
        value = str(value)
    if not isinstance(value, str) or not value:
        return None
    return value[:limit]


def hex_id(value: Any, length: int) -> str | None:
    """A lowercase hex id of `length` characters, not all zero; None otherwise. A
    trace id may come as a UUID with dashes, which Sentry also takes."""
    if not isinstance(value, str):
        return None
    if length == 32 and len(value) == 36:
        value = value.replace("-", "")
    value = value.lower()
    if len(value) != length or not _HEX.issuperset(value) or value == "0" * length:
        return None
    return value


def time_us(value: Any) -> int | None:
    """Epoch microseconds of a Sentry time: seconds since the epoch (a number, as the
    SDKs send) or an RFC 3339 string; None when missing or out of range."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if isinstance(value, int) and not 0 <= value <= MAX_US:
            return None  # out of range, and maybe too big for isfinite's float
        scaled = value * 1_000_000
        if not math.isfinite(scaled):  # 1e303 seconds overflows to infinity here
            return None
        ts_us = round(scaled)
        return ts_us if 0 <= ts_us <= MAX_US else None
    if isinstance(value, str):
        try:
            return parse_iso8601_us(value)
        except ValueError:
            return None
    return None


def tags_of(event: dict[str, Any]) -> dict[str, str]:
    """An event's tags as a string map: Sentry takes an object or a list of
    [key, value] pairs. Blank keys and values that are not scalars are left out;
    at most MAX_TAGS, keys and values cut at their limits."""
    raw = event.get("tags")
    pairs: list[Any]
    if isinstance(raw, dict):
        pairs = list(raw.items())
    elif isinstance(raw, list):
        pairs = [p for p in raw if isinstance(p, list | tuple) and len(p) == 2]
    else:
        return {}
    tags: dict[str, str] = {}
    for key, value in pairs:
        name = text(key, MAX_TAG_KEY)
        shown = text(value, MAX_TAG_VALUE)
        if name is None or not name.strip() or shown is None:
            continue  # a blank key, as the custom door refuses it (so forwarding does)
        tags[name] = shown
        if len(tags) >= MAX_TAGS:
            break
    return tags


def service_of(event: dict[str, Any], tags: dict[str, str]) -> str:
    """The service an event or transaction came from (see SERVICE_TAGS)."""
    for name in SERVICE_TAGS:
        if tags.get(name):
            return tags[name]
    contexts = event.get("contexts")
    otel = contexts.get("otel") if isinstance(contexts, dict) else None
    resource = otel.get("resource") if isinstance(otel, dict) else None
    if isinstance(resource, dict):
        named = text(resource.get("service.name"))
        if named:
            return named
    platform = text(event.get("platform")) or "other"
    return (UNKNOWN_SERVICE + platform)[:MAX_LABEL]
