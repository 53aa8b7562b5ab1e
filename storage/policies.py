"""Per-project policies set on the dashboard or the read API (`project_policies`):
each project's scrubbing settings, inbound filters and detector thresholds in their
mapping form (model/policy.py's PARTS, a column each), which the policy extension
(extensions/policy.py) lays over the configuration's. Checked before they are
stored (model/policy.py's readers), so a row always reads back."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from model.policy import PARTS
from model.timeutil import now_us
from storage import schema
from storage.audit.log import Actor, Target, record
from storage.store import Store
from storage.upsert import insert

# What each part's change is recorded as (storage/audit/actions.py).
ACTIONS = {"scrubbing": "config.scrubbing", "filters": "config.filter",
           "detectors": "config.detectors"}
Parts = dict[str, dict[str, Any]]  # part -> its mapping form ({} when not set)


def _parts(row: Any) -> Parts:
    return {part: dict(getattr(row, part) or {}) for part in PARTS}


def all_policies(store: Store) -> dict[int, Parts]:
    """Every project's stored policy, by part."""
    t = schema.project_policies
    with store.reader.connect() as conn:
        rows = conn.execute(select(t.c.project_id, *(t.c[part] for part in PARTS))).all()
    return {int(r.project_id): _parts(r) for r in rows}


def project_ids(store: Store) -> dict[str, int]:
    """Every project's id by name (the configuration names projects)."""
    p = schema.projects
    with store.reader.connect() as conn:
        return {r.name: int(r.id) for r in conn.execute(select(p.c.id, p.c.name))}


def set_policy(store: Store, project_id: int, policy: Parts, actor: Actor) -> None:
    """Store a project's policy (each part of PARTS; one not given is not set), and
    record each part that changed as `actor`'s ACTIONS (storage/audit/) in the same
    transaction."""
    _write(store, project_id, policy, actor)


def _write(store: Store, project_id: int, policy: Parts | None, actor: Actor) -> None:
    t = schema.project_policies
    with store.writer.begin() as conn:
        row = conn.execute(select(*(t.c[part] for part in PARTS))
                           .where(t.c.project_id == project_id)).first()
        before = {part: {} for part in PARTS} if row is None else _parts(row)
        after = {part: dict((policy or {}).get(part) or {}) for part in PARTS}
        target = Target("project", project_id, project_id)
        for part in PARTS:
            if before[part] != after[part]:
                record(conn, actor, ACTIONS[part], target, before=before[part],
                       after=after[part])
        if policy is None:
            conn.execute(t.delete().where(t.c.project_id == project_id))
            return
        values = {"project_id": project_id, **after,
                  "updated_us": now_us(), "updated_by": actor.name[:200]}
        statement = insert(conn.dialect.name, t).values(values)
        conn.execute(statement.on_conflict_do_update(
            index_elements=[t.c.project_id],
            set_={k: statement.excluded[k] for k in values if k != "project_id"}))


def clear_policy(store: Store, project_id: int, actor: Actor) -> None:
    """Remove a project's stored policy (the configuration's applies), recorded."""
    _write(store, project_id, None, actor)
