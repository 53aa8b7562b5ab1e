"""What routing and rendering alerts read besides the facts: project names and the
status of the groups facts are about. Reads only, on the reader engine."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import and_, or_, select

from storage import schema
from storage.store import Store

CHUNK = 200  # (project, fingerprint) pairs per query: bounded statement size


def project_names(store: Store, ids: Iterable[int]) -> dict[int, str]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    p = schema.projects
    with store.reader.connect() as conn:
        rows = conn.execute(select(p.c.id, p.c.name).where(p.c.id.in_(wanted))).all()
    return {int(row.id): str(row.name) for row in rows}


def group_statuses(store: Store, groups: Iterable[tuple[int, str]]
                   ) -> dict[tuple[int, str], str]:
    """{(project id, fingerprint): status} of the groups that exist."""
    return {key: status for key, (_, status) in _groups(store, groups).items()}


def group_ids(store: Store, groups: Iterable[tuple[int, str]]) -> dict[tuple[int, str], int]:
    """{(project id, fingerprint): group id}: the dashboard's group page is by id."""
    return {key: group_id for key, (group_id, _) in _groups(store, groups).items()}


def _groups(store: Store, groups: Iterable[tuple[int, str]]
            ) -> dict[tuple[int, str], tuple[int, str]]:
    wanted = sorted(set(groups))
    g = schema.error_groups
    found: dict[tuple[int, str], tuple[int, str]] = {}
    with store.reader.connect() as conn:
        for start in range(0, len(wanted), CHUNK):
            chunk = wanted[start:start + CHUNK]
            rows = conn.execute(
                select(g.c.id, g.c.project_id, g.c.fingerprint, g.c.status).where(or_(*(
                    and_(g.c.project_id == project_id, g.c.fingerprint == fingerprint)
                    for project_id, fingerprint in chunk)))).all()
            found.update({(int(row.project_id), str(row.fingerprint)):
                          (int(row.id), str(row.status)) for row in rows})
    return found


def work_waiting(store: Store, now_us: int) -> tuple[bool, bool]:
    """(a fact is not routed yet, a delivery is due and not leased), read on the
    reader: on SQLite, routing and claiming take the write lock the ingest writer
    needs, so a collector with nothing to do looks before it takes it. Both use
    an index (the partial one on unrouted facts; status and next attempt)."""
    f, d = schema.alert_facts, schema.alert_deliveries
    with store.reader.connect() as conn:
        unrouted = conn.execute(select(f.c.id).where(f.c.routed_us.is_(None)).limit(1)
                                ).first() is not None
        due = conn.execute(select(d.c.id).where(
            d.c.status == "pending", d.c.next_attempt_us <= now_us,
            or_(d.c.claimed_until_us.is_(None), d.c.claimed_until_us < now_us)).limit(1)
        ).first() is not None
    return unrouted, due
