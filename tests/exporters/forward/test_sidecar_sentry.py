"""A Sentry error through a sidecar: the real Python SDK's event, sent to a sidecar
collector that stores it and forwards it, is stored by the gateway exactly as the
sidecar stored it (exception chain with frames and source context, context, tags,
level, environment, release, occurrence key), and an SDK's retry, forwarded twice,
is stored and counted once upstream."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests

from receiver.sentry.bounded import FILTERED
from sounding.config import DEFAULT_PROCESSORS
from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import KEYS, dsn, post_envelope
from tests.support import clients
from tests.support.server import Server

# Long (tests/conftest.py): two collectors per store and the real SDK, ~35 s alone.
pytestmark = [pytest.mark.clients(clients.SENTRY_SDK_2), pytest.mark.long]
GATEWAY_KEY = "gateway-key"
CLIENT = Path(__file__).parents[2] / "receiver" / "sentry" / "sentry_sdk_client.py"
EVENT_ID = "5f1c0d6e2b7a4c3d9e8f7a6b5c4d3e2f"
# Everything an error row holds but what each collector gives it itself.
OWN_COLUMNS = ("id", "project_id", "received_us")


def sidecar_config(tmp_path: Path, gateway: Server) -> str:
    path = tmp_path / "sidecar.yaml"
    path.write_text(f"""
dashboard: {{enabled: false}}
service:
  pipeline:
    receivers: [http]
    processors: [{", ".join(DEFAULT_PROCESSORS)}]
    exporters: [sql, forward]
exporters:
  forward:
    endpoint: {gateway.base}
    headers: {{Authorization: "Bearer {GATEWAY_KEY}"}}
    max_backoff_seconds: 1
""")
    return str(path)


def sdk_event() -> dict[str, Any]:
    """The real sentry-sdk's chained exception event (frames with source context,
    contexts, user, breadcrumbs, tags, release, environment), with a request
    carrying secrets and more tags, as a web framework integration adds them."""
    python = clients.python(clients.SENTRY_SDK_2)
    out = subprocess.run([python, str(CLIENT)], capture_output=True, text=True,
                         check=True, timeout=60)
    event: dict[str, Any] = json.loads(out.stdout)["events"][0]
    event["event_id"] = EVENT_ID
    event["tags"] = {**event.get("tags", {}), "region": "eu-west", "request_id": "req-77"}
    event["breadcrumbs"] = {"values": [{"category": "http", "message": "GET /cart",
                                        "data": {"url": "/cart?sentry_key=" + KEYS["acme"]}}]}
    event["request"] = {"url": "https://shop.example/pay", "method": "POST",
                        "headers": {"Authorization": "Bearer s3cret", "User-Agent":
                                    "Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Firefox/126.0"}}
    return event


def stored(server: Server) -> list[dict[str, Any]]:
    rows = server.query("SELECT * FROM error_events ORDER BY id")
    return [{k: json.loads(v) if isinstance(v, str) and v[:1] in "[{" else v
             for k, v in row._mapping.items() if k not in OWN_COLUMNS} for row in rows]


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_sentry_error_reaches_the_gateway_whole_and_once(
        tmp_path: Path, db_url: str, start: Callable[..., Server]) -> None:
    gateway = start(db_url, keys={"acme": GATEWAY_KEY})
    sidecar = start(f"sqlite:///{tmp_path / 'sidecar.db'}", keys=KEYS,
                    config=sidecar_config(tmp_path, gateway))
    body = envelope({"event_id": EVENT_ID, "dsn": dsn(sidecar)}, [item("event", sdk_event())])
    for _ in range(2):  # the SDK retries: the sidecar forwards both copies
        response = post_envelope(sidecar, body)
        assert response.status_code == 200, response.text
        assert response.json() == {"id": EVENT_ID}
    wait_for(lambda: bool(gateway.query("SELECT id FROM error_events")),
             "the error did not reach the gateway")
    wait_for(lambda: not sidecar.query("SELECT id FROM outbox"),
             "the sidecar's queue did not empty")
    # Both copies went up and were acknowledged: none refused, none dropped. (The
    # sender counts a row after deleting it: the count may trail the empty queue.)
    sidecar.wait_for_metric("sounding_forward_sent_records_total", 2, exporter="forward",
                            signal="errors")
    metrics = requests.get(sidecar.base + "/metrics", timeout=10).text
    assert 'sounding_forward_sent_records_total{exporter="forward",signal="errors"} 2.0' \
        in metrics
    assert "sounding_forward_failed_records_total{" not in metrics

    (here,) = stored(sidecar)
    (upstream,) = stored(gateway)  # the second forward was stored once
    assert upstream == here
    assert upstream["occurrence_key"] == EVENT_ID
    assert (upstream["level"], upstream["environment"], upstream["release"]) == (
        "error", "production", "shop@2.1.0")
    assert upstream["tags"]["region"] == "eu-west" and upstream["tags"]["browser"] == "Firefox 126"
    chain = upstream["exceptions"]
    assert len(chain) == 2 and chain[-1]["value"] == "order 42 not found"
    assert any("context_line" in f and f.get("in_app") for f in chain[-1]["frames"])
    assert upstream["source_context"] is not None
    assert upstream["context"]["request"]["headers"]["Authorization"] == FILTERED
    assert upstream["context"]["breadcrumbs"] == [{"category": "http", "message": "GET /cart",
                                                   "data": {"url": f"/cart?sentry_key={FILTERED}"}}]
    (count,) = gateway.query("SELECT count FROM error_groups")
    assert count[0] == 1
