"""Reading the audit log (storage/audit/log.py writes it): newest first, filtered by
who, what and which project, a page at a time. The audit page and its read-API twin
(dashboard/audit.py) both read it here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from storage import schema
from storage.store import Store

_A, _P = schema.audit_log, schema.projects


@dataclass(frozen=True)
class Entry:
    id: int
    at_us: int
    actor_kind: str
    actor_id: str | None
    actor_name: str
    action: str
    target_kind: str
    target_id: str | None
    project_id: int | None
    project: str | None  # its name, None for none
    before: Any
    after: Any


@dataclass(frozen=True)
class Filter:
    """What the entries must match; None: anything. `action` is one action or a
    family (`group`: every `group.*`)."""
    actor: str | None = None  # the actor's name, exactly
    action: str | None = None
    project_id: int | None = None


@dataclass(frozen=True)
class Page:
    entries: list[Entry]
    more: bool  # older entries match too


def entries(store: Store, match: Filter, limit: int, offset: int = 0) -> Page:
    """Up to `limit` entries matching `match`, newest first (the order written, for
    entries of one microsecond), from the `offset`th."""
    where = []
    if match.actor is not None:
        where.append(_A.c.actor_name == match.actor)
    if match.action is not None:
        where.append(_A.c.action == match.action if "." in match.action
                     else _A.c.action.startswith(match.action + ".", autoescape=True))
    if match.project_id is not None:
        where.append(_A.c.project_id == match.project_id)
    query = (select(_A, _P.c.name.label("project"))
             .select_from(_A.outerjoin(_P, _P.c.id == _A.c.project_id))
             .where(*where)
             .order_by(_A.c.at_us.desc(), _A.c.id.desc()).limit(limit + 1).offset(offset))
    with store.reader.connect() as conn:
        rows = conn.execute(query).all()
    found = [Entry(int(r.id), int(r.at_us), r.actor_kind, r.actor_id, r.actor_name, r.action,
                   r.target_kind, r.target_id, r.project_id, r.project, r.before, r.after)
             for r in rows[:limit]]
    return Page(found, len(rows) > limit)
