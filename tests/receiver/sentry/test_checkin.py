"""Check-ins decoded (receiver/sentry/checkin.py): the SDK's `check_in` item, Sentry's
zero id, the HTTP door's query, and every bad field named under its item; and at the
door, an envelope's check-in stored or refused with a 400 naming it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import requests

from model.errors import InvalidInput
from receiver.sentry.checkin import ZERO_ID, decode_check_in, from_query
from receiver.sentry.envelope import parse_envelope
from receiver.sentry.items import decode_envelope
from tests.receiver.sentry.helpers import KEY, post_envelope, project_id, start_sentry
from tests.support.server import Server, check_quiet

NOW = 1_795_168_800_000_000
SDK_ITEM = {  # as sentry-sdk 2.x writes it (sentry_sdk/crons/api.py)
    "type": "check_in", "monitor_slug": "nightly",
    "check_in_id": "83a7c03ed0a04e1b97e2e3b18d38f244",
    "status": "ok", "duration": 12.5, "environment": "production", "release": "jobs@1.0",
    "contexts": {"trace": {"trace_id": "8f431b7aa08441bbbd5a0100fd91f9fe"}},
    "monitor_config": {"schedule": {"type": "crontab", "value": "0 * * * *"},
                       "checkin_margin": 5, "max_runtime": 30, "timezone": "UTC"}}


def test_the_sdks_check_in() -> None:
    c = decode_check_in(SDK_ITEM, NOW)
    assert (c.check_in_id, c.monitor_slug, c.status, c.ts_us, c.duration_s) == (
        "83a7c03ed0a04e1b97e2e3b18d38f244", "nightly", "ok", NOW, 12.5)
    assert (c.environment, c.release, c.trace_id, c.latest) == (
        "production", "jobs@1.0", "8f431b7aa08441bbbd5a0100fd91f9fe", False)
    assert c.monitor_config is not None and c.monitor_config["schedule"] == "0 * * * *"


@pytest.mark.parametrize("check_in_id", [ZERO_ID, "00000000-0000-0000-0000-000000000000",
                                         None, ""])
def test_no_id_or_the_zero_id_finishes_the_latest_run(check_in_id: Any) -> None:
    c = decode_check_in({**SDK_ITEM, "check_in_id": check_in_id}, NOW)
    assert c.latest and len(c.check_in_id) == 32 and c.check_in_id != ZERO_ID


@pytest.mark.parametrize(("change", "field"), [
    ({"status": "done"}, "items[3].status"),
    ({"monitor_slug": "a b"}, "items[3].monitor_slug"),
    ({"check_in_id": "xyz"}, "items[3].check_in_id"),
    ({"duration": -1}, "items[3].duration"),
    ({"duration": "long"}, "items[3].duration"),
    ({"environment": 7}, "items[3].environment"),
    ({"monitor_config": {"schedule": {"type": "crontab", "value": "0 0 0 0 0"}}},
     "items[3].monitor_config.schedule.value"),
])
def test_every_bad_field_is_named(change: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        decode_check_in({**SDK_ITEM, **change}, NOW, "items[3]")
    assert [d["field"] for d in caught.value.details] == [field]


def test_the_http_doors_query_over_its_body() -> None:
    payload = from_query({"status": "error", "duration": "3.5", "environment": "staging"},
                         {"status": "ok", "monitor_config": SDK_ITEM["monitor_config"]})
    c = decode_check_in(payload, NOW, "check_in", slug="backup")
    assert (c.monitor_slug, c.status, c.duration_s, c.environment, c.latest) == (
        "backup", "error", 3.5, "staging", True)
    with pytest.raises(InvalidInput) as caught:
        decode_check_in(from_query({"duration": "nan"}, {"status": "ok"}), NOW, "check_in",
                        slug="backup")
    assert [d["field"] for d in caught.value.details] == ["check_in.duration"]


def envelope(*items: dict[str, Any]) -> bytes:
    lines = [b"{}"]
    for item in items:
        lines += [b'{"type": "check_in"}', json.dumps(item).encode()]
    return b"\n".join(lines)


def test_an_envelopes_check_ins_become_records() -> None:
    decoded = decode_envelope(parse_envelope(envelope(SDK_ITEM, {**SDK_ITEM, "status": "error",
                                                                "check_in_id": None})), NOW)
    assert [c.status for c in decoded.check_ins] == ["ok", "error"]
    assert decoded.items == {"check_in": 2}


@pytest.fixture
def sentry(start: Callable[..., Server], sqlite_url: str) -> Server:
    return start_sentry(start, sqlite_url)


def test_at_the_door_a_check_in_is_stored_and_a_bad_one_refused(sentry: Server) -> None:
    assert post_envelope(sentry, envelope(SDK_ITEM)).status_code == 200
    assert sentry.query("SELECT monitor_slug, status, duration_s FROM cron_checkins") == [
        ("nightly", "ok", 12.5)]
    answer = post_envelope(sentry, envelope({**SDK_ITEM, "status": "maybe"}))
    assert answer.status_code == 400
    assert "items[0].status" in answer.text


def test_a_slug_that_is_not_utf8_is_a_counted_400_without_a_traceback(sentry: Server) -> None:
    # Tornado refuses a path that does not decode before the handler has its path
    # arguments; the refusal (receiver/http/base.py's write_error) must not need them.
    answer = requests.get(f"{sentry.base}/api/{project_id(sentry)}/cron/%ff%fe/{KEY}/?status=ok",
                          timeout=10)
    assert answer.status_code == 400
    assert "Invalid unicode in url" in answer.json()["detail"]
    assert sentry.metric("sounding_requests_refused_total", endpoint="sentry_cron",
                         reason="invalid") == 1
    assert "Invalid unicode in url" in sentry.wait_for_log("refused 400 on sentry_cron")
    check_quiet(sentry)
