"""Per-project policies set on the dashboard or the read API (`project_policies`):
each project's scrubbing settings and inbound filters in their mapping form
(model/policy.py), which the policy extension (extensions/policy.py) lays over the
configuration's. Checked before they are stored (model/policy.py's readers), so a
row always reads back."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from model.timeutil import now_us
from storage import schema
from storage.store import Store
from storage.upsert import insert


def all_policies(store: Store) -> dict[int, tuple[dict[str, Any], dict[str, Any]]]:
    """Every project's stored (scrubbing, filters)."""
    t = schema.project_policies
    with store.reader.connect() as conn:
        rows = conn.execute(select(t.c.project_id, t.c.scrubbing, t.c.filters)).all()
    return {int(r.project_id): (dict(r.scrubbing or {}), dict(r.filters or {})) for r in rows}


def project_ids(store: Store) -> dict[str, int]:
    """Every project's id by name (the configuration names projects)."""
    p = schema.projects
    with store.reader.connect() as conn:
        return {r.name: int(r.id) for r in conn.execute(select(p.c.id, p.c.name))}


def set_policy(store: Store, project_id: int, scrubbing: dict[str, Any],
               filters: dict[str, Any], actor: str) -> None:
    t = schema.project_policies
    values = {"project_id": project_id, "scrubbing": scrubbing, "filters": filters,
              "updated_us": now_us(), "updated_by": actor[:200]}
    with store.writer.begin() as conn:
        statement = insert(conn.dialect.name, t).values(values)
        conn.execute(statement.on_conflict_do_update(
            index_elements=[t.c.project_id],
            set_={k: statement.excluded[k] for k in values if k != "project_id"}))


def clear_policy(store: Store, project_id: int) -> None:
    t = schema.project_policies
    with store.writer.begin() as conn:
        conn.execute(t.delete().where(t.c.project_id == project_id))
