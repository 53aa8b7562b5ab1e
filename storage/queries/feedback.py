"""User feedback (storage/schema/feedback.py) as the dashboard and API read it: a
project's, newest first, each with the error group of the event it names; and one
group's (with the groups merged into it).

The link is made here, when read: a feedback names an event by its id, which is
the event's occurrence key (receiver/sentry/event.py), and may arrive before it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, select

from storage import schema
from storage.queries import members
from storage.store import Store

_F, _E, _G = schema.feedback, schema.error_events, schema.error_groups
MAX_PAGE = 200


@dataclass(frozen=True, slots=True)
class Feedback:
    id: int
    source: str  # "feedback" or "user_report"
    name: str | None
    email: str | None
    message: str
    url: str | None
    release: str | None
    environment: str | None
    ts_us: int
    associated_event_id: str | None
    group_id: int | None  # the group of the event it names, once that is stored
    exception_class: str | None
    group_message: str | None


def _columns() -> list[Any]:
    return [_F.c.id, _F.c.source, _F.c.name, _F.c.email, _F.c.message, _F.c.url,
            _F.c.release, _F.c.environment, _F.c.ts_us, _F.c.associated_event_id]


def _linked(query: Any) -> Any:
    """`query` of feedback joined to its event and that event's group, when stored."""
    return (query.add_columns(_G.c.id.label("group_id"), _G.c.exception_class,
                              _G.c.message.label("group_message"))
            .outerjoin(_E, and_(_E.c.project_id == _F.c.project_id,
                                _E.c.occurrence_key == _F.c.associated_event_id))
            .outerjoin(_G, and_(_G.c.project_id == _E.c.project_id,
                                _G.c.fingerprint == _E.c.fingerprint)))


def _feedback(row: Any) -> Feedback:
    return Feedback(int(row.id), row.source, row.name, row.email, row.message, row.url,
                    row.release, row.environment, int(row.ts_us), row.associated_event_id,
                    None if row.group_id is None else int(row.group_id),
                    row.exception_class, row.group_message)


def list_feedback(store: Store, project_id: int, limit: int = 50, offset: int = 0
                  ) -> tuple[list[Feedback], int]:
    """A page of the project's feedback, newest first, and how many there are."""
    query = _linked(select(*_columns()).where(_F.c.project_id == project_id)).order_by(
        _F.c.ts_us.desc(), _F.c.id.desc()).limit(min(limit, MAX_PAGE)).offset(offset)
    with store.reader.connect() as conn:
        total = conn.execute(select(func.count()).select_from(_F)
                             .where(_F.c.project_id == project_id)).scalar()
        return [_feedback(r) for r in conn.execute(query)], int(total or 0)


def of_group(store: Store, project_id: int, fingerprints: Sequence[str], limit: int = 50
             ) -> list[Feedback]:
    """The feedback about events of a group's fingerprints (its own and those of the
    groups merged into it: storage/queries/members.py), newest first."""
    events = (select(_E.c.occurrence_key).where(and_(
        _E.c.project_id == project_id, _E.c.occurrence_key.is_not(None),
        members.one_of(_E.c.fingerprint, fingerprints))))
    query = _linked(select(*_columns()).where(and_(
        _F.c.project_id == project_id, _F.c.associated_event_id.in_(events)))).order_by(
        _F.c.ts_us.desc(), _F.c.id.desc()).limit(min(limit, MAX_PAGE))
    with store.reader.connect() as conn:
        return [_feedback(r) for r in conn.execute(query)]
