"""One occurrence of an error group with everything it carried: the detail the group
page shows and the read API returns."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import JSON, Text, and_, cast, select

from storage import schema
from storage.queries import members as mq
from storage.queries.values import UNREADABLE, load
from storage.store import Store

_E = schema.error_events


@dataclass(frozen=True)
class ErrorEventDetail:
    id: int
    fingerprint: str
    ts_us: int
    received_us: int
    exception_class: str
    message: str
    backtrace: list[str]
    params: Any  # a JSON object as sent (None when none was sent)
    # file, lineno, context_line, pre_context, post_context; None when none was sent
    source_context: dict[str, Any] | None
    request_id: str | None
    user_id: str | None
    trace_id: str | None
    span_id: str | None
    # Stored values that could not be read (backtrace, params, source_context, tags,
    # exceptions, context): each is shown as empty and named here
    # (storage/queries/values.py).
    unreadable: list[str] = field(default_factory=list)
    service: str | None = None  # as Occurrence's
    environment: str | None = None
    release: str | None = None
    log_time_ns: int | None = None
    # As model/records.py's ErrorEvent holds them (None when not sent); tags,
    # exceptions and context are named in `unreadable` when a stored one is not of
    # its shape (a string map, a list of objects, an object).
    tags: dict[str, str] | None = None
    level: str | None = None
    exceptions: list[Any] | None = None
    context: dict[str, Any] | None = None


def event(store: Store, project_id: int, fingerprint: str | Sequence[str],
          event_id: int | None = None) -> ErrorEventDetail | None:
    """One occurrence with everything it carried: `event_id`, or the latest one (of
    the group, or of a merged group's members: their fingerprints)."""
    where = and_(_E.c.project_id == project_id, mq.one_of(_E.c.fingerprint, fingerprint))
    # The JSON columns as text, parsed by values.load: whatever a row holds, it reads.
    query = select(*[cast(c, Text).label(c.name) if isinstance(c.type, JSON) else c
                     for c in _E.columns])
    if event_id is not None:
        query = query.where(and_(where, _E.c.id == event_id))
    else:
        query = query.where(where).order_by(_E.c.ts_us.desc(), _E.c.id.desc()).limit(1)
    with store.reader.connect() as conn:
        r = conn.execute(query).first()
    if r is None:
        return None
    loaded = {"backtrace": _backtrace(load(r.backtrace)), "params": load(r.params),
              "source_context": _source_context(load(r.source_context)),
              "tags": _shaped(load(r.tags), dict, str), "exceptions": _shaped(
                  load(r.exceptions), list, dict), "context": _shaped(load(r.context), dict)}
    unreadable = [name for name, value in loaded.items() if value is UNREADABLE]
    shown = {name: None if value is UNREADABLE else value for name, value in loaded.items()}
    return ErrorEventDetail(
        int(r.id), r.fingerprint, int(r.ts_us), int(r.received_us), r.exception_class,
        r.message, shown["backtrace"] or [], shown["params"], shown["source_context"],
        r.request_id, r.user_id, r.trace_id, r.span_id, unreadable, r.service,
        r.environment, r.release, None if r.log_time_ns is None else int(r.log_time_ns),
        tags=shown["tags"], level=r.level, exceptions=shown["exceptions"],
        context=shown["context"])


def _shaped(value: Any, kind: type[Any], item: type[Any] | None = None) -> Any:
    """`value` when it is None or a `kind` whose items (values, for a dict) are of
    `item`; UNREADABLE otherwise."""
    if value is None or value is UNREADABLE:
        return value
    if not isinstance(value, kind):
        return UNREADABLE
    items = list(value.values()) if isinstance(value, dict) else list(value)
    return value if item is None or all(isinstance(v, item) for v in items) else UNREADABLE


def _backtrace(value: Any) -> Any:
    """A list of frames, each shown as text; anything else is unreadable."""
    if value is None:
        return []
    if not isinstance(value, list):
        return UNREADABLE
    return [frame if isinstance(frame, str) else json.dumps(frame) for frame in value]


def _source_context(value: Any) -> Any:
    """The shape the group page draws (an integer line number, lines of text), or
    UNREADABLE when a stored one does not have it."""
    if value is None:
        return None
    if not isinstance(value, dict) or isinstance(value.get("lineno"), bool) \
            or not isinstance(value.get("lineno"), int):
        return UNREADABLE

    def lines(key: str) -> list[str]:
        got = value.get(key)
        return [str(line) for line in got] if isinstance(got, list) else []
    return {"file": str(value.get("file", "")), "lineno": value["lineno"],
            "context_line": str(value.get("context_line", "")),
            "pre_context": lines("pre_context"), "post_context": lines("post_context")}
