"""What else a Sentry event tells, kept as sent for the error page: ErrorEvent.context.

Kept, when present: user, request, contexts (trace, os, browser, runtime, device,
...), breadcrumbs, logentry, message, platform, sdk, server_name and transaction.
`modules` (every installed package and its version) is left out: it is large, the
same in every event of a release, and noise on an error page. `extra` is not here:
it becomes the error's params (receiver/sentry/event.py).

Each part is a bounded, scrubbed copy (receiver/sentry/bounded.py: no Authorization,
Cookie, X-Sentry-Auth or sentry_key value is ever kept); `request.cookies` is
filtered as a whole. Breadcrumbs come as an object with `values` or as the list
itself; the newest MAX_BREADCRUMBS are kept, oldest first as sent. The whole context
is at most MAX_CONTEXT_BYTES of JSON: past it, the biggest parts are dropped first,
and their names listed under "_trimmed", so that the page can say what is missing.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from receiver.sentry.bounded import (
    FILTERED,
    MAX_ITEMS,
    MAX_STRING,
    json_size,
    plain,
    plain_items,
    scrub,
    secret,
)
from receiver.sentry.values import text

MAX_BREADCRUMBS = 100
MAX_CONTEXT_BYTES = 64 * 1024
TRIMMED = "_trimmed"

_OBJECTS = ("user", "contexts", "logentry", "sdk")
_LABELS = ("platform", "server_name", "transaction")


def breadcrumbs_of(raw: Any) -> list[Any] | None:
    if isinstance(raw, dict):
        raw = raw.get("values")
    if not isinstance(raw, list):
        return None
    crumbs = [c for c in raw[-MAX_BREADCRUMBS:] if isinstance(c, dict)]
    return plain_items(crumbs) or None


def request_of(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    request = plain(raw)
    if "cookies" in request:
        request["cookies"] = FILTERED
    return request or None


def bounded_total(context: dict[str, Any], trimmed: list[str] | None = None
                  ) -> dict[str, Any]:
    """`context` within MAX_CONTEXT_BYTES, its biggest parts dropped first; their
    names are added to `trimmed` (what an earlier collector already dropped) under
    TRIMMED, which is not counted, so that bounding a bounded context changes
    nothing."""
    if json_size(context) <= MAX_CONTEXT_BYTES:  # one encoding in C: the usual case
        if trimmed:
            context[TRIMMED] = list(trimmed)
        return context
    sizes = {name: json_size(part) for name, part in context.items()}
    total = sum(sizes.values())
    trimmed = list(trimmed or [])
    for name in sorted(sizes, key=sizes.__getitem__, reverse=True):
        if total <= MAX_CONTEXT_BYTES:
            break
        del context[name]
        total -= sizes[name]
        trimmed.append(name)
    if trimmed:
        context[TRIMMED] = trimmed
    return context


def bounded_part(name: str, value: Any) -> Any:
    """One part of a context, bounded by its name's rule; None when nothing is left."""
    if name == "request":
        return request_of(value)
    if name == "breadcrumbs":
        return breadcrumbs_of(value)
    if name in _LABELS:
        label = text(value)
        return None if label is None else plain(label)
    return plain(value)


def bounded_context(parts: dict[str, Any]) -> dict[str, Any] | None:
    """The context of `parts` (name -> value as sent), each bounded (see the module),
    at most MAX_ITEMS parts, names cut and scrubbed, a part named as a secret
    filtered; None when nothing is left. The one rule of both doors: the Sentry
    door's parts come from the event (context_of), the custom door's as sent
    (receiver/custom/error_details.py), where a forwarded context arrives already bounded."""
    context: dict[str, Any] = {}
    trimmed = parts.get(TRIMMED)
    for name, value in islice(parts.items(), MAX_ITEMS):
        if name == TRIMMED:
            continue
        bounded = FILTERED if secret(name) else bounded_part(name, value)
        if bounded is not None:
            context[scrub(name[:MAX_STRING])] = bounded
    if not context:
        return None
    return bounded_total(context, [str(t)[:MAX_STRING] for t in trimmed]
                         if isinstance(trimmed, list) else None)


def context_of(event: dict[str, Any]) -> dict[str, Any] | None:
    """The event's context (see the module); None when it has none of those parts."""
    parts: dict[str, Any] = {}
    for name in _OBJECTS:
        value = event.get(name)
        if isinstance(value, dict) and value:
            parts[name] = value
    for name in ("request", "breadcrumbs"):
        if name in event:
            parts[name] = event[name]
    message = event.get("message")
    if isinstance(message, dict) and message:
        parts["message"] = message
    elif text(message, MAX_STRING) is not None:
        parts["message"] = text(message, MAX_STRING)
    for name in _LABELS:
        if name in event:
            parts[name] = event[name]
    return bounded_context(parts) if parts else None
