"""The audit log under retention (storage/retention/sweep.py), on SQLite and PostgreSQL:
records older than `audit_log` go, whatever their project (or none), in batches of
`batch_rows`; newer ones stay; 0 keeps them all."""

from __future__ import annotations

import sqlalchemy as sa

from storage import schema
from storage.audit.log import ADMIN_TOKEN, Target, record
from storage.retention import sweep as retention
from storage.store import Store

NOW = 1_795_168_800  # epoch seconds
DAY, US = 86400, 1_000_000
KEEP = {"spans": 7 * DAY, "logs": 7 * DAY, "metric_points": 7 * DAY,
        "error_occurrences": 30 * DAY, "rollups": 90 * DAY, "deploys": 365 * DAY}


def fill(store: Store, ages_days: list[float]) -> None:
    with store.writer.begin() as conn:
        for i, age in enumerate(ages_days):
            record(conn, ADMIN_TOKEN, "group.reopen",
                   Target("group", i, None if i % 2 else 1),
                   at_us=int((NOW - age * DAY) * US))


def kept(store: Store) -> list[str]:
    a = schema.audit_log
    with store.reader.connect() as conn:
        return [str(t) for t in conn.execute(sa.select(a.c.target_id).order_by(a.c.id))
                .scalars()]


def test_records_past_the_setting_go_and_newer_stay(store: Store) -> None:
    fill(store, [400, 366, 364, 10, 0, 500, 365.5])
    outcome = retention.sweep(store, retention.Policy(KEEP, batch_rows=2, audit_log=365 * DAY),
                              "me", now_s=NOW)
    assert kept(store) == ["2", "3", "4"]
    assert outcome.deleted["audit_log"] == 4
    again = retention.sweep(store, retention.Policy(KEEP, audit_log=365 * DAY), "me",
                            now_s=NOW)
    assert "audit_log" not in again.deleted and kept(store) == ["2", "3", "4"]


def test_zero_keeps_the_audit_log_for_ever(store: Store) -> None:
    fill(store, [4000, 1])
    retention.sweep(store, retention.Policy(KEEP, audit_log=0), "me", now_s=NOW)
    assert kept(store) == ["0", "1"]
