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

from typing import Any

from receiver.sentry.bounded import FILTERED, MAX_STRING, json_size, plain
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
    return [plain(c) for c in crumbs] or None


def request_of(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    request = plain(raw)
    if "cookies" in request:
        request["cookies"] = FILTERED
    return request or None


def bounded_total(context: dict[str, Any]) -> dict[str, Any]:
    """`context` within MAX_CONTEXT_BYTES, its biggest parts dropped first."""
    if json_size(context) <= MAX_CONTEXT_BYTES:  # one encoding in C: the usual case
        return context
    sizes = {name: json_size(part) for name, part in context.items()}
    total = sum(sizes.values())
    trimmed: list[str] = []
    for name in sorted(sizes, key=sizes.__getitem__, reverse=True):
        if total <= MAX_CONTEXT_BYTES:
            break
        del context[name]
        total -= sizes[name]
        trimmed.append(name)
    if trimmed:
        context[TRIMMED] = trimmed
    return context


def context_of(event: dict[str, Any]) -> dict[str, Any] | None:
    """The event's context (see the module); None when it has none of those parts."""
    context: dict[str, Any] = {}
    for name in _OBJECTS:
        value = event.get(name)
        if isinstance(value, dict) and value:
            context[name] = plain(value)
    request = request_of(event.get("request"))
    if request is not None:
        context["request"] = request
    crumbs = breadcrumbs_of(event.get("breadcrumbs"))
    if crumbs is not None:
        context["breadcrumbs"] = crumbs
    message = event.get("message")
    if isinstance(message, dict) and message:
        context["message"] = plain(message)
    elif text(message, MAX_STRING) is not None:
        context["message"] = plain(text(message, MAX_STRING))
    for name in _LABELS:
        label = text(event.get(name))
        if label is not None:
            context[name] = plain(label)
    return bounded_total(context) if context else None
