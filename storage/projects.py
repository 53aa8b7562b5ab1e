"""Projects: created by name (`sounding projects create`, or with their first key),
listed with how many keys each has active."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from storage import keys, schema
from storage.audit.log import SYSTEM, Actor
from storage.store import Store

MAX_NAME = 200  # schema.projects.name


@dataclass(frozen=True)
class ProjectInfo:
    id: int
    name: str
    created_us: int
    active_keys: int


def create_project(store: Store, name: str, actor: Actor = SYSTEM) -> tuple[int, bool]:
    """(project id, whether it was created now, then recorded in the audit log as
    made by `actor`); ValueError for an unusable name."""
    name = name.strip()
    if not name or len(name) > MAX_NAME:
        raise ValueError(f"a project name is 1 to {MAX_NAME} characters")
    existing = keys.project_id_of(store, name)
    if existing is not None:
        return existing, False
    with store.writer.begin() as conn:
        return keys.ensure_project(conn, name, actor), True


def list_projects(store: Store) -> list[ProjectInfo]:
    p, k = schema.projects, schema.api_keys
    counted = (select(k.c.project_id, func.count().label("n")).where(keys.active())
               .group_by(k.c.project_id).subquery())
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(p.c.id, p.c.name, p.c.created_us, func.coalesce(counted.c.n, 0).label("n"))
            .outerjoin(counted, counted.c.project_id == p.c.id)
            .order_by(p.c.name)).all()
    return [ProjectInfo(int(r.id), r.name, int(r.created_us), int(r.n)) for r in rows]
