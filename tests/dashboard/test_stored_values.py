"""Every read path is total: rows already in the store (written by an older version,
or by a plugin) never make a page or a read-API answer fail.

The rows are inserted with SQL, as an older version would have left them, on SQLite
and on PostgreSQL; then every page and endpoint that shows them is read through the
real server and must answer 200 with valid HTML, or strictly valid JSON.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import requests
from opentelemetry.proto.trace.v1 import trace_pb2
from sqlalchemy import text

from tests.dashboard.data import ADMIN_TOKEN
from tests.support.server import Projects, Server

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
# The calendar's edges, in microseconds: 9999-12-31T23:59:59Z and 0001-01-01T00:00:00Z.
YEAR_9999_US = 253_402_300_799_000_000
YEAR_1_US = -62_135_596_800_000_000
EDGE_US = [YEAR_9999_US, YEAR_1_US, INT64_MAX, INT64_MIN]

TRACE_EDGE = "e1" * 16  # spans at the ends of the nanosecond range
TRACE_BROKEN = "b0" * 16  # span bodies that do not parse
TRACE_NOW = "a0" * 16  # a recent trace, found by search, with an odd end time


def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([byte])
        out += bytes([byte | 0x80])


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def body_nested(levels: int) -> bytes:
    """A Span body with one attribute whose value is an array nested `levels` deep:
    protobuf's parser refuses past 100 message levels."""
    value = _field(1, b"leaf")  # AnyValue.string_value
    for _ in range(levels):
        value = _field(5, _field(1, value))  # AnyValue.array_value.values
    return _field(9, _field(1, b"deep") + _field(2, value))  # Span.attributes


def body_with_event_at(time_ns: int) -> bytes:
    span = trace_pb2.Span()
    attribute = span.attributes.add()
    attribute.key, attribute.value.double_value = "ratio", float("nan")
    event = span.events.add()
    event.name, event.time_unix_nano = "late", time_ns
    return bytes(span.SerializeToString())


def nested(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def strict_json(response: requests.Response) -> Any:
    assert response.status_code == 200, (response.url, response.status_code, response.text)
    assert response.headers["Content-Type"].startswith("application/json")

    def refuse(token: str) -> None:
        raise AssertionError(f"{response.url} emitted the non-JSON token {token}")
    return json.loads(response.text, parse_constant=refuse)


class Rows:
    """Raw inserts into the collector's own store."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.pg = server.db_url.startswith("postgres")
        self.project = server.project_id()

    def json(self, name: str) -> str:
        return f"CAST(:{name} AS json)" if self.pg else f":{name}"

    def run(self, sql: str, **params: Any) -> None:
        with self.server.db().begin() as conn:
            conn.execute(text(sql), {"p": self.project, **params})

    def group(self, fingerprint: str, status: str, first_us: int, last_us: int) -> int:
        self.run("INSERT INTO error_groups (project_id, fingerprint, exception_class, message,"
                 " first_seen_us, last_seen_us, count, status, resolved_us, reopen_count,"
                 " last_reopened_us) VALUES (:p, :f, 'EdgeError', 'at the edge', :a, :b,"
                 " 9223372036854775807, :s, :b, 2, :a)",
                 f=fingerprint, s=status, a=first_us, b=last_us)
        (group_id,) = [r.id for r in self.server.query(
            "SELECT id FROM error_groups WHERE project_id = :p AND fingerprint = :f",
            p=self.project, f=fingerprint)]
        return int(group_id)

    def event(self, fingerprint: str, ts_us: int, params: str | None = None,
              backtrace: str = '["a.py:1 in f"]', source_context: str | None = None,
              trace_id: str | None = None) -> None:
        self.run("INSERT INTO error_events (project_id, fingerprint, ts_us, received_us,"
                 " exception_class, message, backtrace, params, source_context, request_id,"
                 f" user_id, trace_id, span_id) VALUES (:p, :f, :t, :t, 'EdgeError', 'm',"
                 f" {self.json('bt')}, {self.json('params')}, {self.json('sc')}, 'r', 'u',"
                 " :trace, NULL)",
                 f=fingerprint, t=ts_us, bt=backtrace, params=params, sc=source_context,
                 trace=trace_id)

    def span(self, trace_id: str, span_id: str, start_ns: int, end_ns: int, body: bytes,
             parent: str = "", resource_id: int = 0) -> None:
        self.run("INSERT INTO spans (project_id, trace_id, span_id, parent_span_id, name,"
                 " kind, start_ns, end_ns, status_code, status_message, service_name,"
                 " scope_name, category, resource_id, body) VALUES (:p, :trace, :span,"
                 " :parent, 'edge', 2, :s, :e, 2, '', 'edge-svc', '', 'custom', :r, :body)",
                 trace=bytes.fromhex(trace_id), span=bytes.fromhex(span_id),
                 parent=bytes.fromhex(parent), s=start_ns, e=end_ns, r=resource_id, body=body)


def fill(rows: Rows) -> dict[str, int]:
    """One group per status with events at every calendar edge, odd stored JSON,
    deploys and rollups at the edges, and spans with edge times and broken bodies."""
    now_us = time.time_ns() // 1000
    groups = {status: rows.group(f"edge-{status}", status, YEAR_1_US, YEAR_9999_US)
              for status in ("open", "resolved", "ignored")}
    groups["extreme"] = rows.group("edge-int64", "open", INT64_MIN, INT64_MAX)
    groups["recent"] = rows.group("edge-recent", "open", now_us - 10**6, now_us)
    for ts_us in EDGE_US:
        for fingerprint in ("edge-open", "edge-resolved", "edge-ignored", "edge-int64"):
            rows.event(fingerprint, ts_us, params='{"n": 1}', trace_id=TRACE_EDGE)
    # What JSON columns may hold: nesting far past any sensible depth, numbers out of
    # double range (PostgreSQL's json type keeps the text), a source context of the
    # wrong shape, a backtrace that is not a list of strings.
    rows.event("edge-recent", now_us - 5, params=nested(600),
               source_context='{"file": 3, "lineno": "12", "pre_context": "x"}',
               backtrace='[1, {"f": 2}, null]', trace_id=TRACE_BROKEN)
    rows.event("edge-recent", now_us - 4, params='{"big": 1e400, "small": -1e400}',
               source_context='{"file": "a.py", "lineno": 9223372036854775807,'
                              ' "context_line": "x", "pre_context": ["a"],'
                              ' "post_context": ["b"]}',
               backtrace='"not a list"', trace_id=TRACE_EDGE)
    if not rows.pg:  # PostgreSQL's json type refuses these tokens; SQLite keeps any text
        rows.event("edge-recent", now_us - 3, params='{"nan": NaN, "inf": -Infinity}')
        rows.event("edge-recent", now_us - 2, params="not json at all {")
    rows.event("edge-recent", now_us - 1, params='{"fine": [1, 2.5, "x"]}',
               trace_id=TRACE_NOW)
    for ts_us in [*EDGE_US, now_us - 3_600_000_000]:
        rows.run("INSERT INTO deploys (project_id, git_sha, version, env, deployer,"
                 " description, ts_us, received_us) VALUES (:p, 'abc123', '1', 'production',"
                 " 'ci', 'edge', :t, :t)", t=ts_us)
        rows.run("INSERT INTO error_status_changes (project_id, fingerprint, from_status,"
                 " to_status, reason, at_us) VALUES (:p, 'edge-open', 'resolved', 'open',"
                 " 'recurrence', :t)", t=ts_us)
    for minute in (INT64_MAX // 60 * 60, -(INT64_MAX // 60 * 60), now_us // 60_000_000 * 60):
        rows.run("INSERT INTO request_rollups (project_id, service, env, method, route,"
                 " minute, count, error_count, duration_sum_ms) VALUES (:p, 'shop',"
                 " 'production', 'GET', '/edge', :m, 10, 1, 1e300)", m=minute)
        rows.run("INSERT INTO request_latency (project_id, service, env, method, route,"
                 " minute, bucket, count) VALUES (:p, 'shop', 'production', 'GET', '/edge',"
                 " :m, 2000000000, 10)", m=minute)
    for hour in (INT64_MAX // 3600 * 3600, -(INT64_MAX // 3600 * 3600)):
        rows.run("INSERT INTO error_group_hourly (project_id, fingerprint, hour, count)"
                 " VALUES (:p, 'edge-open', :h, 1)", h=hour)
    resource = '{"service.name": "edge-svc", "deep": ' + nested(600) + "}"
    # An id of the project's own: the module's projects share the table.
    resource_id = 1000 + rows.project
    rows.run("INSERT INTO resources (id, project_id, attributes) VALUES (:r, :p, "
             f"{rows.json('a')})", r=resource_id, a=resource)
    rows.span(TRACE_EDGE, "01" * 8, INT64_MAX - 10, INT64_MAX, body_with_event_at(2**64 - 1))
    rows.span(TRACE_EDGE, "02" * 8, INT64_MIN, INT64_MAX, b"", parent="01" * 8)
    rows.span(TRACE_EDGE, "03" * 8, 0, INT64_MIN, b"", parent="99" * 8)
    rows.span(TRACE_BROKEN, "04" * 8, 10, 20, body_nested(101), resource_id=resource_id)
    rows.span(TRACE_BROKEN, "05" * 8, 10, 30, b"\xff\xff\xff\xff garbage", parent="04" * 8)
    now_ns = time.time_ns()
    rows.span(TRACE_NOW, "06" * 8, now_ns - 10**9, INT64_MIN, body_nested(101))
    rows.span(TRACE_NOW, "07" * 8, now_ns - 10**9, INT64_MAX, b"garbage")
    return groups


@pytest.fixture
def stored(dash_projects: Projects) -> tuple[Server, dict[str, int]]:
    """The module's collector, as a project of this test's own sees it, that project
    holding the rows of `fill`."""
    server = dash_projects.take()
    return server, fill(Rows(server))


def admin() -> requests.Session:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {ADMIN_TOKEN}"
    return session


def page(session: requests.Session, url: str) -> str:
    response = session.get(url, timeout=30)
    assert response.status_code == 200, (url, response.status_code, response.text[-2000:])
    assert response.headers["Content-Type"].startswith("text/html")
    assert response.text.rstrip().endswith("</html>"), url
    return response.text


def test_pages_show_stored_rows_at_the_calendar_edges_and_odd_values(
        stored: tuple[Server, dict[str, int]]) -> None:
    server, groups = stored
    session = admin()
    base = server.project_url()
    for status in ("open", "resolved", "ignored"):
        for sort in ("last_seen", "first_seen", "count"):
            html = page(session, f"{base}/errors?status={status}&sort={sort}")
            assert "EdgeError" in html
    event_ids = [r.id for r in server.project_rows("error_events", "id")]
    for group_id in groups.values():
        page(session, f"{base}/errors/{group_id}")
        page(session, f"{base}/errors/{group_id}?range=30d")
    for event_id in event_ids:
        fingerprint = server.query("SELECT fingerprint FROM error_events WHERE id = :i",
                                   i=event_id)[0].fingerprint
        group_id = server.query("SELECT id FROM error_groups WHERE project_id = :p "
                                "AND fingerprint = :f", p=server.project_id(),
                                f=fingerprint)[0].id
        page(session, f"{base}/errors/{group_id}?event={event_id}")
    broken = page(session, f"{base}/traces/{TRACE_BROKEN}")
    assert broken.count("attributes unreadable") == 2
    assert "nested deeper than" in broken  # the resource's deep value, cut short
    assert "attributes unreadable" in page(session, f"{base}/traces/{TRACE_NOW}")
    edge = page(session, f"{base}/traces/{TRACE_EDGE}")
    assert "18446744073709551615" in edge  # the event time, as stored
    assert "out of calendar range" in edge  # errors linked to it, at int64 times
    traces = page(session, f"{base}/traces")
    assert TRACE_NOW[:16] in traces
    for query in ("min_ms=1", "min_ms=0.5&status=error", "range=30d"):
        page(session, f"{base}/traces?{query}")
    # Graphs of ten-minute steps read per-minute histograms (1%), a day's route table
    # and a week's graphs the hourly ones (5%, storage/queries/performance.py).
    day = page(session, f"{base}/performance?range=24h")
    assert "each within 1%" in day and "\u00b15%" in day
    week = page(session, f"{base}/performance?method=GET&route=/edge&range=7d")
    assert "each within 5%" in week
    assert "\u00b11%" in page(session, f"{base}/performance?range=1h")
    for window in ("15m", "24h"):
        page(session, f"{base}/deploys?range=30d&window={window}")
    page(session, f"{base}/deploys?env=production")


def test_group_pages_mark_values_that_cannot_be_shown(
        stored: tuple[Server, dict[str, int]]) -> None:
    server, groups = stored
    base = server.project_url(f"/errors/{groups['recent']}")
    api = server.project_api(f"/error-groups/{groups['recent']}")
    session = admin()
    by_params = {r.id: r for r in server.query(
        "SELECT id, params FROM error_events WHERE project_id = :p "
        "AND fingerprint = 'edge-recent'", p=server.project_id())}
    for event_id in by_params:
        html = page(session, f"{base}?event={event_id}")
        document = strict_json(session.get(f"{api}?event={event_id}", timeout=30))
        params = document["event"]["params"]
        shown = json.dumps(params)
        if "NaN" in str(by_params[event_id].params):
            assert params == {"nan": "NaN", "inf": "-Infinity"}
        elif "1e400" in str(by_params[event_id].params):
            assert params == {"big": "Infinity", "small": "-Infinity"}
        elif '"a":{"a"' in str(by_params[event_id].params).replace(" ", ""):
            assert "nested deeper than" in shown and "nested deeper than" in html
        elif "not json" in str(by_params[event_id].params):
            assert params is None and document["event"]["unreadable"] == ["params"]
            assert "params unreadable" in html


def test_read_api_answers_valid_json_for_every_stored_row(
        stored: tuple[Server, dict[str, int]]) -> None:
    server, groups = stored
    session = admin()
    strict_json(session.get(server.base + "/api/v1/projects", timeout=30))
    api = server.project_api()
    listed = strict_json(session.get(api + "/error-groups?status=all&limit=500",
                                      timeout=30))
    assert {item["group"]["id"] for item in listed["items"]} >= set(groups.values())
    for sort in ("first_seen", "count"):
        strict_json(session.get(api + f"/error-groups?status=all&sort={sort}",
                                timeout=30))
    for event in server.query("SELECT e.id, g.id AS gid FROM error_events e JOIN error_groups"
                              " g ON g.project_id = e.project_id AND g.fingerprint ="
                              " e.fingerprint WHERE e.project_id = :p", p=server.project_id()):
        strict_json(session.get(api + f"/error-groups/{event.gid}?event={event.id}",
                                timeout=30))
    for group_id in groups.values():
        strict_json(session.get(api + f"/error-groups/{group_id}?range=30d", timeout=30))
    for trace_id in (TRACE_EDGE, TRACE_BROKEN, TRACE_NOW):
        document = strict_json(session.get(api + f"/traces/{trace_id}", timeout=30))
        assert document["rows"]
    broken = strict_json(session.get(api + f"/traces/{TRACE_BROKEN}", timeout=30))
    assert [row["span"]["unreadable"] for row in broken["rows"]] == [
        ["attributes", "events", "links"], ["attributes", "events", "links"]]
    edge = strict_json(session.get(api + f"/traces/{TRACE_EDGE}", timeout=30))
    (late,) = [row["span"] for row in edge["rows"] if row["span"]["events"]]
    assert late["events"][0]["time_unix_nano"] == 2**64 - 1
    assert late["attributes"] == {"ratio": "NaN"}
    found = strict_json(session.get(api + "/traces?min_duration_ms=1", timeout=30))
    assert TRACE_NOW in [t["trace_id"] for t in found["page"]["items"]]
    strict_json(session.get(api + "/traces?status=error&range=30d", timeout=30))
    last = strict_json(session.get(api + "/traces", timeout=30, params={
        "range": "custom", "from": "2262-04-01", "to": "2262-04-11T23:47:16Z"}))
    assert [t["trace_id"] for t in last["page"]["items"]] == [TRACE_EDGE]
    performance = strict_json(session.get(api + "/performance?range=1h", timeout=30))
    assert [r["route"] for r in performance["routes"]] == ["/edge"]
    strict_json(session.get(api + "/performance?method=GET&route=/edge", timeout=30))
    deploys = strict_json(session.get(api + "/deploys?range=30d", timeout=30))
    assert len(deploys["deploys"]) == 1
    strict_json(session.get(api + "/deploys?env=production&window=24h", timeout=30))
    changed = session.post(api + f"/error-groups/{groups['extreme']}/status",
                           json={"status": "resolved"}, timeout=30)
    assert changed.status_code == 200, changed.text
