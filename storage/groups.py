"""Error group status changes made by a person (through the dashboard or its API).

Open -> Resolved, Open -> Ignored, Resolved/Ignored -> Open. Every change is
recorded in error_status_changes with the reason `user`.
"""

from __future__ import annotations

from sqlalchemy import and_, select, update

from sounding.timeutil import now_us
from storage import schema
from storage.schema import GROUP_STATUSES as STATUSES
from storage.store import Store


def set_status(store: Store, project_id: int, fingerprint: str, status: str,
               at_us: int | None = None) -> str | None:
    """Set a group's status; returns the previous status, or None if there is no such group."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}")
    at = now_us() if at_us is None else at_us
    g = schema.error_groups
    where = and_(g.c.project_id == project_id, g.c.fingerprint == fingerprint)
    with store.writer.begin() as conn:
        previous = conn.execute(
            select(g.c.status).where(where).with_for_update()).scalar_one_or_none()
        if previous is None or previous == status:
            return previous
        conn.execute(update(g).where(where).values(
            status=status, resolved_us=at if status == "resolved" else None))
        conn.execute(schema.error_status_changes.insert(), {
            "project_id": project_id, "fingerprint": fingerprint, "from_status": previous,
            "to_status": status, "reason": "user", "at_us": at})
    return str(previous)
