"""A cron monitor's row and its configuration: made or updated by a check-in's
`monitor_config` (by the checker, storage/crons/checker.py) or on the dashboard
(`save`). Only the configuration columns are written here; the state columns are
the checker's."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import bindparam, select

from model import cron
from model.cron import MonitorConfig
from storage import schema, upsert
from storage.store import Store

_M = schema.cron_monitors


@dataclass(frozen=True, slots=True)
class Monitor:
    id: int
    project_id: int
    slug: str
    config: MonitorConfig | None  # None: no schedule yet (no missed check-in then)
    status: str | None
    next_expected_us: int | None
    last_checkin_us: int | None
    failures: int
    successes: int
    incident_id: int | None
    checkin_margin: int
    max_runtime: int
    created_us: int
    updated_us: int

    @property
    def deadline_us(self) -> int | None:
        """When the next check-in is missed: its expected time plus the margin."""
        if self.next_expected_us is None:
            return None
        return self.next_expected_us + self.checkin_margin * cron.MINUTE_US


def config_of(row: Any) -> MonitorConfig | None:
    if row.schedule_type is None:
        return None
    return MonitorConfig(row.schedule_type, row.schedule, row.unit, int(row.checkin_margin),
                         int(row.max_runtime), row.timezone, int(row.failure_threshold),
                         int(row.recovery_threshold))


def monitor_of(row: Any) -> Monitor:
    def opt(value: Any) -> int | None:
        return None if value is None else int(value)
    return Monitor(int(row.id), int(row.project_id), row.slug, config_of(row), row.status,
                   opt(row.next_expected_us), opt(row.last_checkin_us), int(row.failures),
                   int(row.successes), opt(row.incident_id), int(row.checkin_margin),
                   int(row.max_runtime), int(row.created_us), int(row.updated_us))


def config_columns(config: MonitorConfig | None) -> dict[str, Any]:
    if config is None:  # Sentry's defaults, until a configuration comes
        return {"checkin_margin": cron.DEFAULT_MARGIN_MIN,
                "max_runtime": cron.DEFAULT_MAX_RUNTIME_MIN, "timezone": "UTC",
                "failure_threshold": 1, "recovery_threshold": 1}
    return {"schedule_type": config.schedule_type, "schedule": config.schedule,
            "unit": config.unit, "checkin_margin": config.checkin_margin,
            "max_runtime": config.max_runtime, "timezone": config.timezone,
            "failure_threshold": config.failure_issue_threshold,
            "recovery_threshold": config.recovery_threshold}


_CONFIG = ("schedule_type", "schedule", "unit", "checkin_margin", "max_runtime", "timezone",
           "failure_threshold", "recovery_threshold")
_FOUND = select(_M).where(_M.c.project_id == bindparam("project"), _M.c.slug == bindparam("s"))


@lru_cache(maxsize=8)
def _ensure_sql(dialect: str, configured: bool) -> Any:
    """The upsert of `ensure`, built once per dialect (a statement built per call
    costs several times its execution: the checker makes thousands at once)."""
    insert = upsert.insert(dialect, _M).values(
        project_id=bindparam("project"), slug=bindparam("s"), failures=0, successes=0,
        created_us=bindparam("now"), updated_us=bindparam("now"),
        **{name: bindparam(f"c_{name}") for name in _CONFIG})
    if not configured:
        return insert.on_conflict_do_nothing(index_elements=["project_id", "slug"])
    return insert.on_conflict_do_update(
        index_elements=["project_id", "slug"],
        set_={**{name: insert.excluded[name] for name in _CONFIG},
              "updated_us": insert.excluded.updated_us})


def ensure(conn: Any, dialect: str, project_id: int, slug: str,
           config: MonitorConfig | None, now_us: int) -> Monitor:
    """The monitor `slug` of the project, made if new, its configuration replaced
    by `config` when one is given; inside the caller's transaction."""
    values = {"schedule_type": None, "schedule": None, "unit": None,
              **config_columns(config)}
    conn.execute(_ensure_sql(dialect, config is not None),
                 {"project": project_id, "s": slug, "now": now_us,
                  **{f"c_{name}": values[name] for name in _CONFIG}})
    return monitor_of(conn.execute(_FOUND, {"project": project_id, "s": slug}).one())


def save(store: Store, project_id: int, slug: str, config: MonitorConfig,
         now_us: int) -> Monitor:
    """Make or reconfigure a monitor (the dashboard). A schedule changed while a
    check-in is expected keeps that expectation until the next check-in."""
    with store.writer.begin() as conn:
        return ensure(conn, store.dialect, project_id, slug, config, now_us)
