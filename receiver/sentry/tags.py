"""A Sentry event's tags: those it sent (receiver/sentry/values.tags_of), plus the
ones Sentry derives and shows on every issue, each only when the event did not set
it itself:

- `browser`: contexts.browser's name and version ("Chrome 126.0"); else a small
  guess of the family and major version from the request's User-Agent header
  (what a server-side SDK reports about its client);
- `os`: contexts.os's name and version, else contexts.client_os's;
- `runtime`: contexts.runtime's name and version ("CPython 3.11.7");
- `server_name` and `transaction`: the event's own fields;
- `mechanism` and `handled`: how the raised exception was caught (its mechanism's
  type, and "yes"/"no"), as Sentry tags them: so unhandled errors can be filtered.

`level` is not a tag: ErrorEvent has a field for it. At most MAX_TAGS in all: the
event's own tags first, then the derived ones while there is room.
"""

from __future__ import annotations

import re
from typing import Any

from receiver.sentry.values import MAX_TAG_VALUE, MAX_TAGS, tags_of, text

# Most specific first: Edge and Opera also say Chrome, Chrome also says Safari.
_USER_AGENTS = (
    ("Edge", re.compile(r"\bEdg(?:e|A|iOS)?/(\d+)")),
    ("Opera", re.compile(r"\bOPR/(\d+)")),
    ("Firefox", re.compile(r"\bFirefox/(\d+)")),
    ("Chrome", re.compile(r"\b(?:Chrome|CriOS)/(\d+)")),
    ("Safari", re.compile(r"\bVersion/(\d+)[.\d]* (?:Mobile/\S+ )?Safari/")),
)


def _named(contexts: dict[str, Any], name: str) -> str | None:
    """`<name> <version>` of one of the event's contexts, or the name alone."""
    context = contexts.get(name)
    if not isinstance(context, dict):
        return None
    family = text(context.get("name"), MAX_TAG_VALUE)
    if family is None:
        return None
    version = text(context.get("version"), MAX_TAG_VALUE)
    return f"{family} {version}"[:MAX_TAG_VALUE] if version else family


def _header(request: Any, wanted: str) -> str | None:
    headers = request.get("headers") if isinstance(request, dict) else None
    if isinstance(headers, dict):
        pairs: list[Any] = list(headers.items())
    elif isinstance(headers, list):
        pairs = [p for p in headers if isinstance(p, list) and len(p) == 2]
    else:
        return None
    return next((value for name, value in pairs if isinstance(name, str)
                 and name.lower() == wanted and isinstance(value, str)), None)


def browser_of_user_agent(user_agent: str) -> str | None:
    """`<family> <major version>` of a browser's User-Agent; None when unknown."""
    for family, pattern in _USER_AGENTS:
        found = pattern.search(user_agent)
        if found:
            return f"{family} {found.group(1)}"
    return None


def derived_tags(event: dict[str, Any], raised: dict[str, Any] | None) -> dict[str, str]:
    contexts = event.get("contexts")
    contexts = contexts if isinstance(contexts, dict) else {}
    derived: dict[str, str | None] = {}
    user_agent = _header(event.get("request"), "user-agent")
    derived["browser"] = _named(contexts, "browser") or (
        browser_of_user_agent(user_agent) if user_agent else None)
    derived["os"] = _named(contexts, "os") or _named(contexts, "client_os")
    derived["runtime"] = _named(contexts, "runtime")
    derived["server_name"] = text(event.get("server_name"), MAX_TAG_VALUE)
    derived["transaction"] = text(event.get("transaction"), MAX_TAG_VALUE)
    mechanism = (raised or {}).get("mechanism") or {}
    derived["mechanism"] = text(mechanism.get("type"), MAX_TAG_VALUE)
    handled = mechanism.get("handled")
    derived["handled"] = None if handled is None else ("yes" if handled else "no")
    return {name: value for name, value in derived.items() if value}


def event_tags(event: dict[str, Any], raised: dict[str, Any] | None) -> dict[str, str]:
    """The event's tags and the derived ones (see the module)."""
    tags = tags_of(event)
    for name, value in derived_tags(event, raised).items():
        if len(tags) >= MAX_TAGS:
            break
        tags.setdefault(name, value)
    return tags
