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
from storage.audit.log import Actor, Target, record
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
               filters: dict[str, Any], actor: Actor) -> None:
    """Store a project's policy, and record what changed as `actor`'s `config.scrubbing`
    and `config.filter` (storage/audit/) in the same transaction."""
    _write(store, project_id, (scrubbing, filters), actor)


def _write(store: Store, project_id: int, policy: tuple[dict[str, Any], dict[str, Any]] | None,
           actor: Actor) -> None:
    t = schema.project_policies
    with store.writer.begin() as conn:
        row = conn.execute(select(t.c.scrubbing, t.c.filters)
                           .where(t.c.project_id == project_id)).first()
        before = ({}, {}) if row is None else (dict(row.scrubbing or {}),
                                               dict(row.filters or {}))
        after = ({}, {}) if policy is None else policy
        target = Target("project", project_id, project_id)
        for action, old, new in (("config.scrubbing", before[0], after[0]),
                                 ("config.filter", before[1], after[1])):
            if old != new:
                record(conn, actor, action, target, before=old, after=new)
        if policy is None:
            conn.execute(t.delete().where(t.c.project_id == project_id))
            return
        values = {"project_id": project_id, "scrubbing": policy[0], "filters": policy[1],
                  "updated_us": now_us(), "updated_by": actor.name[:200]}
        statement = insert(conn.dialect.name, t).values(values)
        conn.execute(statement.on_conflict_do_update(
            index_elements=[t.c.project_id],
            set_={k: statement.excluded[k] for k in values if k != "project_id"}))


def clear_policy(store: Store, project_id: int, actor: Actor) -> None:
    """Remove a project's stored policy (the configuration's applies), recorded."""
    _write(store, project_id, None, actor)
