"""The limits set per project on its Limits page or through the API (`project_limits`),
and spike protection's settings (`spike_protection`). The configuration's limits are
not stored: extensions/limits.py lays these over them, category by category."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import delete, insert, select, update

from model.limits import Limit
from model.timeutil import now_us
from storage import schema
from storage.audit.log import Actor, Target, record
from storage.store import Store


def all_limits(store: Store) -> dict[int, dict[str, Limit]]:
    """Every project's stored limits: {project id: {category: Limit}}."""
    t = schema.project_limits
    found: dict[int, dict[str, Limit]] = {}
    with store.reader.connect() as conn:
        for row in conn.execute(select(t.c.project_id, t.c.category, t.c.rate, t.c.burst,
                                       t.c.quota, t.c.period)):
            found.setdefault(int(row[0]), {})[str(row[1])] = Limit(
                float(row[2]), float(row[3]), int(row[4]), str(row[5]))
    return found


def project_limits(store: Store, project_id: int) -> dict[str, Limit]:
    return all_limits(store).get(project_id, {})


def set_limits(store: Store, project_id: int, limits: Mapping[str, Limit],
               actor: Actor) -> None:
    """Replace a project's stored limits by `limits` (empty: the configuration's apply),
    recorded as `actor`'s `config.rate_limit` in the same transaction."""
    t = schema.project_limits
    now = now_us()
    with store.writer.begin() as conn:
        before = {r.category: Limit(float(r.rate), float(r.burst), int(r.quota), r.period)
                  .as_json() for r in conn.execute(
                      select(t).where(t.c.project_id == project_id))}
        after = {category: limit.as_json() for category, limit in limits.items()}
        if before != after:
            record(conn, actor, "config.rate_limit", Target("project", project_id, project_id),
                   before=before, after=after, at_us=now)
        conn.execute(delete(t).where(t.c.project_id == project_id))
        for category, limit in limits.items():
            conn.execute(insert(t).values(project_id=project_id, category=category,
                                          rate=limit.rate, burst=limit.burst,
                                          quota=limit.quota, period=limit.period,
                                          updated_us=now))


def project_names(store: Store) -> dict[str, int]:
    """{project name: id}: the configuration names projects, the store numbers them."""
    with store.reader.connect() as conn:
        return {str(name): int(pid) for pid, name in
                conn.execute(select(schema.projects.c.id, schema.projects.c.name))}


def project_exists(store: Store, project_id: int) -> bool:
    with store.reader.connect() as conn:
        return conn.execute(select(schema.projects.c.id).where(
            schema.projects.c.id == project_id)).first() is not None


# Spike protection.

def spike_settings(store: Store) -> dict[int, tuple[float, bool, float, str]]:
    """{project id: (multiple, active, cap, category)} of the projects that set it."""
    t = schema.spike_protection
    with store.reader.connect() as conn:
        return {int(r[0]): (float(r[1]), bool(r[2]), float(r[3]), str(r[4])) for r in
                conn.execute(select(t.c.project_id, t.c.multiple, t.c.active, t.c.cap,
                                    t.c.category))}


def set_spike_state(store: Store, project_id: int, active: bool, cap: float,
                    category: str) -> None:
    t = schema.spike_protection
    with store.writer.begin() as conn:
        conn.execute(update(t).where(t.c.project_id == project_id).values(
            active=active, cap=cap, category=category, changed_us=now_us()))


def set_spike_multiple(store: Store, project_id: int, multiple: float) -> None:
    """Turn spike protection on at `multiple` times the baseline (0: off)."""
    t = schema.spike_protection
    with store.writer.begin() as conn:
        changed = conn.execute(update(t).where(t.c.project_id == project_id)
                               .values(multiple=multiple)).rowcount
        if not changed:
            conn.execute(insert(t).values(project_id=project_id, multiple=multiple,
                                          active=False, cap=0.0, category="",
                                          changed_us=now_us()))
