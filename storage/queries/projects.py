"""Projects, by name (the dashboard's URLs carry the name)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from storage import schema
from storage.store import Store


@dataclass(frozen=True)
class Project:
    id: int
    name: str


def list_projects(store: Store) -> list[Project]:
    p = schema.projects
    with store.reader.connect() as conn:
        rows = conn.execute(select(p.c.id, p.c.name).order_by(p.c.name)).all()
    return [Project(int(r.id), str(r.name)) for r in rows]
