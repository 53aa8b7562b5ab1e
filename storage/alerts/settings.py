"""Alert destinations and rules made on a project's dashboard page (tables
`alert_destinations`, `alert_rules`, migration 0011).

Pure storage: what is stored is already checked and its credentials already sealed
(extensions/alerts/admin.py does both); here rows go in and come out. A
destination's name is unique per project: adding one twice stores it once and says
so. Each change is recorded in the audit log (`destination.create`/`.delete`,
`alert_rule.create`/`.delete`) in its transaction, with the destination's shown
config (no credential: those are sealed) or the rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Row, delete, select

from model.timeutil import now_us
from storage import schema
from storage.audit.log import SYSTEM, Actor, Target, record
from storage.store import Store
from storage.upsert import insert

_D, _R = schema.alert_destinations, schema.alert_rules


@dataclass(frozen=True, slots=True)
class StoredDestination:
    id: int
    project_id: int
    name: str
    type: str
    config: dict[str, Any]  # no credential: those are in `sealed`
    sealed: bytes
    created_us: int


@dataclass(frozen=True, slots=True)
class StoredRule:
    id: int
    project_id: int
    rule: dict[str, Any]
    created_us: int


@dataclass(slots=True)
class ProjectSettings:
    destinations: list[StoredDestination] = field(default_factory=list)
    rules: list[StoredRule] = field(default_factory=list)


def _destination(row: Row[Any]) -> StoredDestination:
    return StoredDestination(int(row.id), int(row.project_id), row.name, row.type,
                             dict(row.config), bytes(row.sealed), int(row.created_us))


def _rule(row: Row[Any]) -> StoredRule:
    return StoredRule(int(row.id), int(row.project_id), dict(row.rule), int(row.created_us))


def _shown(name: str, kind: str, config: dict[str, Any]) -> dict[str, Any]:
    """A destination as the audit log records it: no credential (`config` has none)."""
    return {"name": name, "type": kind, "config": config}


def add_destination(store: Store, project_id: int, name: str, kind: str,
                    config: dict[str, Any], sealed: bytes,
                    actor: Actor = SYSTEM) -> int | None:
    """The new destination's id; None when the project has one of that name."""
    at = now_us()
    statement = insert(store.dialect, _D).values(
        project_id=project_id, name=name, type=kind, config=config, sealed=sealed,
        created_us=at,
    ).on_conflict_do_nothing(index_elements=["project_id", "name"]).returning(_D.c.id)
    with store.writer.begin() as conn:
        row = conn.execute(statement).first()
        if row is None:
            return None
        record(conn, actor, "destination.create", Target("destination", row[0], project_id),
               after=_shown(name, kind, config), at_us=at)
    return int(row[0])


def destinations(store: Store, project_id: int) -> list[StoredDestination]:
    with store.reader.connect() as conn:
        rows = conn.execute(select(_D).where(_D.c.project_id == project_id)
                            .order_by(_D.c.name))
        return [_destination(row) for row in rows]


def remove_destination(store: Store, project_id: int, destination_id: int,
                       actor: Actor = SYSTEM) -> bool:
    with store.writer.begin() as conn:
        gone = conn.execute(delete(_D).where(_D.c.project_id == project_id,
                                             _D.c.id == destination_id)
                            .returning(_D.c.name, _D.c.type, _D.c.config)).first()
        if gone is None:
            return False
        record(conn, actor, "destination.delete",
               Target("destination", destination_id, project_id),
               before=_shown(gone.name, gone.type, dict(gone.config)))
    return True


def add_rule(store: Store, project_id: int, rule: dict[str, Any],
             actor: Actor = SYSTEM) -> int:
    at = now_us()
    with store.writer.begin() as conn:
        row = conn.execute(insert(store.dialect, _R).values(
            project_id=project_id, rule=rule, created_us=at).returning(_R.c.id)).one()
        record(conn, actor, "alert_rule.create", Target("alert_rule", row[0], project_id),
               after=rule, at_us=at)
    return int(row[0])


def rules(store: Store, project_id: int) -> list[StoredRule]:
    with store.reader.connect() as conn:
        rows = conn.execute(select(_R).where(_R.c.project_id == project_id).order_by(_R.c.id))
        return [_rule(row) for row in rows]


def remove_rule(store: Store, project_id: int, rule_id: int, actor: Actor = SYSTEM) -> bool:
    with store.writer.begin() as conn:
        gone = conn.execute(delete(_R).where(_R.c.project_id == project_id,
                                             _R.c.id == rule_id).returning(_R.c.rule)).first()
        if gone is None:
            return False
        record(conn, actor, "alert_rule.delete", Target("alert_rule", rule_id, project_id),
               before=dict(gone.rule))
    return True


def all_settings(store: Store) -> dict[int, ProjectSettings]:
    """Every project's dashboard-made destinations and rules, by project id (projects
    with neither are left out), for the alerts extension to load."""
    found: dict[int, ProjectSettings] = {}
    with store.reader.connect() as conn:
        for row in conn.execute(select(_D).order_by(_D.c.project_id, _D.c.name)):
            found.setdefault(int(row.project_id), ProjectSettings()).destinations.append(
                _destination(row))
        for row in conn.execute(select(_R).order_by(_R.c.project_id, _R.c.id)):
            found.setdefault(int(row.project_id), ProjectSettings()).rules.append(_rule(row))
    return found
