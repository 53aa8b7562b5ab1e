"""The time of a project's newest data (errors, spans, deploys), for the dashboard to
open on a range that shows it. Each part is a max() over an index led by project_id."""

from __future__ import annotations

from sqlalchemy import func, select

from storage import schema
from storage.store import Store


def newest_us(store: Store, project_id: int) -> int | None:
    """The newest error, span start or deploy of the project (µs), None when it has none."""
    parts = (
        select(func.max(schema.error_groups.c.last_seen_us))
        .where(schema.error_groups.c.project_id == project_id),
        select(func.max(schema.spans.c.start_ns))
        .where(schema.spans.c.project_id == project_id),
        select(func.max(schema.deploys.c.ts_us)).where(schema.deploys.c.project_id == project_id),
    )
    with store.reader.connect() as conn:
        errors, spans_ns, deploys = (conn.execute(q).scalar() for q in parts)
    found = [int(v) for v in (errors, None if spans_ns is None else int(spans_ns) // 1000,
                              deploys) if v is not None]
    return max(found) if found else None
