"""Inbound filters end to end (processors/filters.py): each filter of a project's
policy, set in the configuration, refuses the Sentry events or custom errors it
names (they are stored nowhere) and counts them in sounding_records_dropped_total
with reason `filtered`, while the errors it does not name are stored; the client's
own address is read for an IP range when the event names no user address. On SQLite
and PostgreSQL."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import requests

from proto.sounding.v1 import ingest_pb2, ingest_pb2_grpc
from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import KEYS, OTHER_KEY, post_envelope
from tests.support.server import Server

IE11 = "Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0"


def config(tmp_path: Path) -> str:
    path = tmp_path / "filters.yaml"
    path.write_text("""
policy:
  projects:
    acme:
      filters:
        localhost: true
        browser_extensions: true
        legacy_browsers: true
        web_crawlers: true
        error_messages: ["Flaky*", "*: socket hang up"]
        releases: ["*-dev"]
        ip_ranges: ["198.51.100.0/24", "2001:db8::/32"]
    other:
      filters:
        ip_ranges: ["127.0.0.0/8"]
""")
    return str(path)


def event(message: str, *, url: str = "https://shop.example/pay", agent: str = FIREFOX,
          ip: str | None = None, frame: str = "https://shop.example/app.js",
          kind: str = "TypeError") -> dict[str, Any]:
    body: dict[str, Any] = {
        "platform": "javascript", "level": "error",
        "exception": {"values": [{"type": kind, "value": message, "stacktrace": {
            "frames": [{"abs_path": frame, "filename": frame, "function": "f", "lineno": 1}]}}]},
        "request": {"url": url, "headers": {"User-Agent": agent}},
    }
    if ip is not None:
        body["user"] = {"ip_address": ip}
    return body


def custom(kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"exception_class": kind, "message": message, "backtrace": ["app.py:1"],
            "fingerprint": f"{kind}-{message}", **extra}


# (what, Sentry event or custom error, refused)
CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("localhost url", event("a", url="http://localhost:8080/pay"), True),
    ("loopback user", event("b", ip="127.0.0.1"), True),
    ("extension frame", event("c", frame="chrome-extension://abcdef/content.js"), True),
    ("extension message", event("ResizeObserver loop limit exceeded"), True),
    ("legacy browser", event("d", agent=IE11), True),
    ("crawler", event("e", agent=GOOGLEBOT), True),
    ("message glob (class)", event("f", kind="FlakyNetwork"), True),
    ("message glob (Class: message)", event("socket hang up", kind="Error"), True),
    ("ip range v4", event("g", ip="198.51.100.23"), True),
    ("ip range v6", event("h", ip="2001:db8::7"), True),
    ("kept event", event("kept one", ip="203.0.113.5"), False),
    ("custom class glob", custom("FlakyTimeout", "x"), True),
    ("custom release glob", custom("Boom", "y", release="2.0.1-dev"), True),
    ("custom localhost request", custom("Boom", "z", context={
        "request": {"url": "http://127.0.0.1/x", "headers": {"User-Agent": FIREFOX}}}), True),
    ("custom crawler", custom("Boom", "w", context={
        "request": {"headers": [["user-agent", GOOGLEBOT]]}}), True),
    ("kept custom", custom("Boom", "kept two", release="2.0.1"), False),
]


def filtered_count(server: Server) -> float:
    text = requests.get(server.base + "/metrics", timeout=10).text
    found = re.search(r'sounding_records_dropped_total\{reason="filtered",signal="errors"\} '
                      r"([0-9.]+)", text) or re.search(
        r'sounding_records_dropped_total\{signal="errors",reason="filtered"\} ([0-9.]+)', text)
    return float(found.group(1)) if found else 0.0


def send(server: Server, document: dict[str, Any], key: str = KEYS["acme"],
         project: int | None = None) -> None:
    if "exception_class" in document:
        answer = server.post("/ingest/errors", json=document, key=key)
        assert answer.status_code == 202, answer.text
    else:
        answer = post_envelope(server, envelope({}, [item("event", document)]), key=key,
                               project=project)
        assert answer.status_code == 200, answer.text


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_each_filter_refuses_what_it_names_and_counts_it(
        tmp_path: Path, db_url: str, start: Callable[..., Server]) -> None:
    server = start(db_url, keys=KEYS, config=config(tmp_path))
    for _what, document, _refused in CASES:
        send(server, document)
    refused = [what for what, _, refused in CASES if refused]
    kept = sorted(d.get("message") or d["exception"]["values"][0]["value"]
                  for _, d, refused in CASES if not refused)
    wait_for(lambda: len(server.query("SELECT id FROM error_events")) == len(kept),
             "the kept errors were not stored")
    # Every request was answered after its commit: what is not stored now never will be.
    stored = sorted(r.message for r in server.query("SELECT message FROM error_events"))
    assert stored == kept
    assert filtered_count(server) == len(refused)
    # And in the project's usage (the Stats page), as filtered errors.
    acme_filtered = ("SELECT sum(u.records) AS n FROM usage_hourly u JOIN projects p ON "
                     "p.id = u.project_id WHERE p.name = 'acme' AND u.outcome = 'filtered' "
                     "AND u.category = 'error'")
    wait_for(lambda: server.query(acme_filtered)[0].n == len(refused),
             "the filtered errors were not in the project's usage", timeout=20)

    # The client's own address, when the event names no user address: project `other`
    # refuses 127.0.0.0/8, the test's connection, on the Sentry door and the custom
    # error door over HTTP and gRPC.
    other = int(server.query("SELECT id FROM projects WHERE name = 'other'")[0][0])
    send(server, custom("Boom", "from the loopback"), key=OTHER_KEY)
    send(server, event("from the loopback too"), key=OTHER_KEY, project=other)
    with grpc.insecure_channel(server.grpc_target) as channel:  # the gRPC peer's address
        ingest_pb2_grpc.ErrorServiceStub(channel).Report(
            ingest_pb2.ErrorRecord(exception_class="E", message="by gRPC", fingerprint="g"),
            metadata=[("authorization", f"Bearer {OTHER_KEY}")], timeout=10)
    assert filtered_count(server) == len(refused) + 3
    assert not server.query("SELECT id FROM error_events WHERE project_id = :p", p=other)
