"""Cron monitors for the dashboard and the API: each monitor with its schedule and
state, its check-ins newest first (a timeline with durations) and its incidents."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select

from storage import schema
from storage.crons.monitors import monitor_of
from storage.store import Store

_M, _C, _I = schema.cron_monitors, schema.cron_checkins, schema.cron_incidents
MAX_CHECK_INS = 500


@dataclass(frozen=True, slots=True)
class MonitorView:
    id: int
    slug: str
    schedule: str | None  # as said (model.cron.MonitorConfig.describe); None: not set
    schedule_type: str | None
    schedule_value: str | None
    unit: str | None
    timezone: str
    checkin_margin: int  # minutes
    max_runtime: int  # minutes
    failure_threshold: int
    recovery_threshold: int
    status: str | None  # model.cron.STATES; None before the first check-in
    next_expected_us: int | None
    deadline_us: int | None  # missed past this
    last_checkin_us: int | None
    incident_open: bool
    created_us: int


@dataclass(frozen=True, slots=True)
class CheckInView:
    check_in_id: str
    status: str
    ts_us: int
    finished_us: int | None
    duration_s: float | None
    environment: str | None
    release: str | None
    trace_id: str | None


@dataclass(frozen=True, slots=True)
class IncidentView:
    id: int
    reason: str
    opened_us: int
    resolved_us: int | None
    opened_by: str


def _view(row: object) -> MonitorView:
    m = monitor_of(row)
    c = m.config
    return MonitorView(
        m.id, m.slug, c.describe() if c else None, c.schedule_type if c else None,
        c.schedule if c else None, c.unit if c else None,
        c.timezone if c else "UTC", m.checkin_margin, m.max_runtime,
        c.failure_issue_threshold if c else 1, c.recovery_threshold if c else 1,
        m.status, m.next_expected_us, m.deadline_us, m.last_checkin_us,
        m.incident_id is not None, m.created_us)


def monitors(store: Store, project_id: int) -> list[MonitorView]:
    with store.reader.connect() as conn:
        return [_view(row) for row in conn.execute(
            select(_M).where(_M.c.project_id == project_id).order_by(_M.c.slug))]


def monitor(store: Store, project_id: int, slug: str) -> MonitorView | None:
    with store.reader.connect() as conn:
        row = conn.execute(select(_M).where(_M.c.project_id == project_id,
                                            _M.c.slug == slug)).first()
    return None if row is None else _view(row)


def check_ins(store: Store, project_id: int, slug: str, since_us: int, until_us: int,
              limit: int = MAX_CHECK_INS) -> list[CheckInView]:
    """The monitor's check-ins in [since_us, until_us), newest first."""
    query = (select(_C).where(_C.c.project_id == project_id, _C.c.monitor_slug == slug,
                              _C.c.ts_us >= since_us, _C.c.ts_us < until_us)
             .order_by(_C.c.ts_us.desc()).limit(limit))
    with store.reader.connect() as conn:
        return [CheckInView(r.check_in_id, r.status, int(r.ts_us),
                            None if r.finished_us is None else int(r.finished_us),
                            r.duration_s, r.environment, r.release, r.trace_id)
                for r in conn.execute(query)]


def incidents(store: Store, monitor_id: int, limit: int = 100) -> list[IncidentView]:
    query = (select(_I).where(_I.c.monitor_id == monitor_id)
             .order_by(_I.c.opened_us.desc()).limit(limit))
    with store.reader.connect() as conn:
        return [IncidentView(int(r.id), r.reason, int(r.opened_us),
                             None if r.resolved_us is None else int(r.resolved_us),
                             r.opened_by) for r in conn.execute(query)]


def counts(store: Store, project_id: int, since_us: int) -> dict[str, dict[str, int]]:
    """Check-ins since `since_us` per monitor and status, for the list's summary."""
    query = (select(_C.c.monitor_slug, _C.c.status, func.count())
             .where(_C.c.project_id == project_id, _C.c.ts_us >= since_us)
             .group_by(_C.c.monitor_slug, _C.c.status))
    out: dict[str, dict[str, int]] = {}
    with store.reader.connect() as conn:
        for slug, status, n in conn.execute(query):
            out.setdefault(slug, {})[status] = int(n)
    return out
