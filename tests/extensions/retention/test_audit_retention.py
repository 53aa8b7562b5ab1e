"""`retention.audit_log` through a running collector, on SQLite and PostgreSQL: an
audit record older than the setting is swept, a new one (made through the dashboard)
stays; a bad setting stops the collector naming the key."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import requests
import sqlalchemy as sa

from extensions.retention.extension import factory
from model.errors import ConfigError
from tests.dashboard.data import ADMIN_TOKEN
from tests.support.server import Server

DAY_US = 86_400 * 10**6


def test_old_audit_records_are_swept_and_new_ones_stay(start: Callable[..., Server],
                                                       db_url: str) -> None:
    server = start(db_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN,
                                "SOUNDING__RETENTION__AUDIT_LOG": "30d",
                                "SOUNDING__RETENTION__SWEEP_EVERY_SECONDS": "1"})
    with server.db().begin() as conn:  # a record of 31 days ago, as it was written then
        conn.execute(sa.text(
            "INSERT INTO audit_log (at_us, actor_kind, actor_id, actor_name, action, "
            "target_kind, target_id) VALUES (:t, 'cli', 'ops', 'ops@host', "
            "'project.create', 'project', '9')"), {"t": time.time_ns() // 1000 - 31 * DAY_US})
    made = requests.post(server.base + "/setup", data={"project": "fresh"}, timeout=10,
                         headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert made.status_code == 200, made.text
    deadline = time.monotonic() + 60
    while server.query("SELECT count(*) FROM audit_log WHERE actor_id = 'ops'")[0][0]:
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.2)
    assert sorted(r[0] for r in server.query("SELECT action FROM audit_log")) == [
        "key.create", "project.create"]


def test_a_bad_audit_log_setting_names_the_key() -> None:
    with pytest.raises(ConfigError, match="retention.audit_log"):
        factory.validate("retention", factory.complete({"audit_log": "a year"}, "retention"))
