"""Releases as `sentry-cli releases new / finalize` make them, and the deploys
`sentry-cli deploys new` records: a Sounding deploy (storage/queries/deploys.py) of
each project of the release, so that deploy markers and before/after comparisons
include it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from storage import schema
from storage.store import Store
from storage.upsert import insert

_R = schema.releases
_D = schema.deploys


@dataclass(frozen=True)
class Release:
    project_id: int
    version: str
    created_us: int
    finalized_us: int | None


def ensure(conn: Connection, project_id: int, version: str, now_us: int) -> None:
    stmt = insert(conn.dialect.name, _R).values(project_id=project_id, version=version,
                                                 created_us=now_us)
    conn.execute(stmt.on_conflict_do_nothing(index_elements=["project_id", "version"]))


def create(store: Store, project_ids: list[int], version: str, now_us: int,
           finalized_us: int | None = None) -> None:
    with store.writer.begin() as conn:
        for project_id in project_ids:
            ensure(conn, project_id, version, now_us)
            if finalized_us is not None:
                _finalize(conn, project_id, version, finalized_us)


def _finalize(conn: Connection, project_id: int, version: str, at_us: int) -> None:
    conn.execute(update(_R).where(_R.c.project_id == project_id, _R.c.version == version)
                 .values(finalized_us=at_us))


def finalize(store: Store, project_ids: list[int], version: str, at_us: int,
             now_us: int) -> None:
    create(store, project_ids, version, now_us, finalized_us=at_us)


def projects_of(store: Store, version: str, among: list[int]) -> list[int]:
    """Which of the projects `among` have the release."""
    with store.reader.connect() as conn:
        return [int(p) for p in conn.execute(select(_R.c.project_id).where(
            _R.c.version == version, _R.c.project_id.in_(among))).scalars()]


def get(store: Store, project_id: int, version: str) -> Release | None:
    with store.reader.connect() as conn:
        row = conn.execute(select(_R).where(_R.c.project_id == project_id,
                                            _R.c.version == version)).first()
    return None if row is None else Release(int(row.project_id), row.version,
                                            int(row.created_us), row.finalized_us)


def record_deploy(store: Store, project_ids: list[int], version: str, env: str,
                  name: str | None, url: str | None, ts_us: int, now_us: int) -> None:
    """A deploy of `version` to `env` for each project, at `ts_us` (when it finished)."""
    rows: list[dict[str, Any]] = [
        {"project_id": p, "git_sha": "", "version": version, "env": env,
         "deployer": "sentry-cli", "description": " ".join(x for x in (name, url) if x) or None,
         "ts_us": ts_us, "received_us": now_us, "service": None}
        for p in project_ids]
    with store.writer.begin() as conn:
        for project_id in project_ids:
            ensure(conn, project_id, version, now_us)
        conn.execute(_D.insert(), rows)
