"""The logs read API and the Logs page, over HTTP against the real server: records
sent through the real OTLP logs door, read back filtered, paged, tailed; bad filters
refused naming the parameter; client text escaped; a trace's logs in its answer."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
import requests

from tests.dashboard.data import (
    ADMIN_TOKEN,
    XSS,
    checkout_trace,
    iso,
    log_record,
    logs_body,
    post_ok,
)
from tests.support.server import Server

API = "/api/v1/projects/acme"
ENV = {"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN}


def admin() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def get(server: Server, path: str, status: int = 200, **params: Any) -> Any:
    response = requests.get(server.base + path, headers=admin(), params=params, timeout=10)
    assert response.status_code == status, response.text
    return response.json()


def logs(server: Server, **params: Any) -> dict[str, Any]:
    return get(server, API + "/logs", **params)  # type: ignore[no-any-return]


def bodies(server: Server, **params: Any) -> list[Any]:
    return [item["body"] for item in logs(server, **params)["items"]]


@pytest.fixture
def dash(start: Callable[..., Server], db_url: str) -> Server:
    """A collector with the dashboard, on SQLite and again on PostgreSQL."""
    return start(db_url, env=ENV)


def test_filters_pages_tail_and_one_record(dash: Server) -> None:
    t0 = time.time_ns() - 600 * 10**9  # ten minutes ago: inside the default range
    trace = "ab" * 16

    def at(n: int) -> int:
        return t0 + n * 10**9

    post_ok(dash, "/ingest/v1/logs", logs_body([
        log_record("user signed in", at(1), 9, "INFO", **{"user.id": 42}),
        log_record("payment refused: 100% of limit", at(2), 17, "ERROR", trace_id=trace,
                   span_id="cd" * 8, **{"user.id": "42", "retry": True}),
        log_record({"kvlistValue": {"values": [
            {"key": "msg", "value": {"stringValue": "Disk FULL"}},
            {"key": "free", "value": {"doubleValue": 0.5}}]}}, at(3), 13, "WARN",
            event_name="disk.alert"),
    ], service="shop"))
    post_ok(dash, "/ingest/v1/logs", logs_body([
        log_record({"intValue": "7"}, at(4), 5, "DEBUG", **{"user.id": 7}),
    ], service="worker"))
    assert logs(dash)["total"] == 4
    assert bodies(dash) == [7, {"msg": "Disk FULL", "free": 0.5},
                            "payment refused: 100% of limit", "user signed in"]
    assert bodies(dash, service="worker") == [7]
    assert bodies(dash, severity="WARN") == [{"msg": "Disk FULL", "free": 0.5},
                                             "payment refused: 100% of limit"]
    assert bodies(dash, severity="17") == ["payment refused: 100% of limit"]
    assert bodies(dash, text="DISK full") == [{"msg": "Disk FULL", "free": 0.5}]
    assert bodies(dash, text="0% of") == ["payment refused: 100% of limit"]
    assert bodies(dash, text="_") == []  # a wildcard in LIKE, literal here
    assert bodies(dash, attr="user.id=42") == ["payment refused: 100% of limit",
                                              "user signed in"]
    assert bodies(dash, attr=["user.id=42", "retry=true"]) == [
        "payment refused: 100% of limit"]
    assert bodies(dash, trace_id=trace.upper()) == ["payment refused: 100% of limit"]
    # A custom range ending (rounded up to its minute) before the records.
    assert bodies(dash, range="custom", **{"from": iso(at(1) / 1e9 - 7200)[:16],
                                           "to": iso(at(1) / 1e9 - 3600)[:16]}) == []
    old = bodies(dash, range="1h", service="shop", severity="INFO", text="refused")
    assert old == ["payment refused: 100% of limit"]

    # Pages keep the total; the newest page's cursor is where a tail starts.
    first, second = logs(dash, limit=3), logs(dash, limit=3, offset=3)
    assert (first["total"], second["total"]) == (4, 4)
    assert [len(first["items"]), len(second["items"])] == [3, 1]
    assert first["next_after"] == f"{at(4)}.{first['items'][0]['id']}"
    nothing_new = logs(dash, after=first["next_after"])
    assert nothing_new["items"] == [] and nothing_new["next_after"] == first["next_after"]
    post_ok(dash, "/ingest/v1/logs", logs_body([
        log_record("later one", at(6)), log_record("later two", at(5))]))
    tail = logs(dash, after=first["next_after"])
    assert [i["body"] for i in tail["items"]] == ["later two", "later one"]  # oldest first
    assert tail["total"] == 2 and tail["next_after"] == f"{at(6)}.{tail['items'][-1]['id']}"
    assert bodies(dash, after=first["next_after"], text="two") == ["later two"]

    # One record, with every field.
    (record,) = logs(dash, trace_id=trace)["items"]
    assert get(dash, f"{API}/logs/{record['id']}") == record
    assert record == {
        "id": record["id"], "time_ns": at(2), "observed_ns": at(2) + 1000,
        "severity_number": 17, "severity_text": "ERROR",
        "body": "payment refused: 100% of limit",
        "attributes": {"user.id": "42", "retry": True},
        "resource": {"service.name": "shop", "deployment.environment.name": "production"},
        "service_name": "shop", "scope_name": "tests", "trace_id": trace, "span_id": "cd" * 8,
        "flags": 1, "event_name": "", "dropped_attributes_count": 0, "unreadable": []}
    (event,) = logs(dash, severity="WARN", service="shop", text="disk")["items"]
    assert (event["event_name"], event["body"]) == ("disk.alert", {"msg": "Disk FULL",
                                                                  "free": 0.5})
    get(dash, f"{API}/logs/{'0' * 32}", 404)
    # A NUL, which PostgreSQL refuses in text: Tornado makes control characters spaces.
    for name, value in (("text", "a\x00b"), ("service", "\x00x"), ("attr", "k=\x00")):
        assert get(dash, API + "/logs", **{name: value})["items"] == []


def test_the_trace_endpoint_includes_the_trace_logs(dash: Server) -> None:
    trace_id, body = checkout_trace()
    post_ok(dash, "/ingest/v1/traces", body)
    spans = body["resourceSpans"][0]["scopeSpans"][0]["spans"]
    t0 = int(spans[0]["startTimeUnixNano"])
    post_ok(dash, "/ingest/v1/logs", logs_body([
        log_record("on the query", t0 + 10 * 10**6, trace_id=trace_id,
                   span_id=spans[1]["spanId"]),
        log_record("on no span of it", t0 + 20 * 10**6, trace_id=trace_id,
                   span_id="ee" * 8),
        log_record("another trace", t0, trace_id="12" * 16)]))
    document = get(dash, f"{API}/traces/{trace_id}")
    assert [(item["body"], item["span_id"]) for item in document["logs"]] == [
        ("on the query", spans[1]["spanId"]), ("on no span of it", "ee" * 8)]
    # A trace known only by its logs is a trace too.
    only = get(dash, f"{API}/traces/{'12' * 16}")
    assert only["rows"] == [] and [i["body"] for i in only["logs"]] == ["another trace"]


BAD = [
    ({"severity": "loud"}, "'severity'"), ({"severity": "25"}, "'severity'"),
    ({"attr": "no-equals"}, "'attr'"), ({"attr": "=v"}, "'attr'"),
    ({"trace_id": "xyz"}, "'trace_id'"), ({"trace_id": "ab" * 15}, "'trace_id'"),
    ({"after": "yesterday"}, "'after'"), ({"after": "1.zz"}, "'after'"),
    ({"limit": "0"}, "'limit'"), ({"limit": "501"}, "'limit'"), ({"offset": "-1"}, "'offset'"),
    ({"offset": "x"}, "'offset'"), ({"range": "1y"}, "range"),
    ({"range": "custom", "from": "then", "to": "2026-11-20T10:00"}, "'from'"),
]


@pytest.mark.parametrize(("params", "named"), BAD)
def test_bad_filters_are_400_naming_the_parameter(dash_server: Server, params: dict[str, str],
                                                  named: str) -> None:
    response = requests.get(dash_server.base + API + "/logs", params=params, headers=admin(),
                            timeout=10)
    assert response.status_code == 400, response.text
    assert named in response.json()["error"]
    if "limit" in params or "offset" in params:
        return  # the page has no such parameter (it pages with `page`)
    page = requests.get(dash_server.base + "/projects/acme/logs", params=params,
                        headers=admin(), timeout=10)
    assert page.status_code == 400, page.text
    assert named.strip("'") in page.text  # HTML-escaped quotes


def test_page_lists_newest_first_with_totals_and_escapes(dash_server: Server) -> None:
    now = time.time_ns()
    trace = "fe" * 16
    post_ok(dash_server, "/ingest/v1/logs", logs_body([
        log_record(XSS, now - 3 * 10**9, 17, XSS, trace_id=trace, event_name=XSS, **{XSS: XSS}),
        log_record("page-test older", now - 4 * 10**9, 9, "INFO", trace_id=trace),
    ], service=XSS, scope=XSS))
    session = requests.Session()
    session.headers.update(admin())
    html = session.get(dash_server.base + "/projects/acme/logs",
                       params={"trace_id": trace, "text": XSS[:8], "attr": f"{XSS}={XSS}"},
                       timeout=10).text
    assert XSS not in html
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 6  # every field, the form
    assert '<span class="shown">1–1</span> of <span class="total">1</span>' in html
    listing = session.get(dash_server.base + "/projects/acme/logs",
                          params={"trace_id": trace}, timeout=10).text
    assert listing.index('class="log sev-error') < listing.index("page-test older")
    assert 'of <span class="total">2</span>' in listing
    assert 'class="tail"' in listing  # the first page of a preset range can be tailed
    # The trace page, with the records on no span of it below the waterfall.
    trace_page = session.get(dash_server.base + f"/projects/acme/traces/{trace}", timeout=10)
    assert trace_page.status_code == 200
    assert XSS not in trace_page.text and "page-test older" in trace_page.text
    assert "trace-other-logs" in trace_page.text


def test_pages_of_the_logs_page(dash_server: Server) -> None:
    now = time.time_ns()
    post_ok(dash_server, "/ingest/v1/logs", logs_body(
        [log_record(f"paged {i}", now - (100 + i) * 10**9) for i in range(55)],
        service="pager"))
    session = requests.Session()
    session.headers.update(admin())
    first = session.get(dash_server.base + "/projects/acme/logs?service=pager", timeout=10).text
    assert '<span class="shown">1–50</span> of <span class="total">55</span>' in first
    assert "paged 0<" in first and "paged 54<" not in first
    second = session.get(dash_server.base + "/projects/acme/logs?service=pager&page=2",
                         timeout=10).text
    assert '<span class="shown">51–55</span> of <span class="total">55</span>' in second
    assert "paged 54<" in second and 'class="tail"' not in second


def test_an_error_from_a_log_record_links_to_it(dash_server: Server) -> None:
    trace_id, body = checkout_trace(service="linked")
    post_ok(dash_server, "/ingest/v1/traces", body)
    span = body["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["spanId"]
    at = int(body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["startTimeUnixNano"]) + 10**7
    post_ok(dash_server, "/ingest/v1/logs", logs_body([
        log_record("charge failed", at, 17, "ERROR", trace_id=trace_id, span_id=span,
                   **{"exception.type": "LinkedLogError", "exception.message": "card declined",
                      "exception.stacktrace": "Traceback...\nLinkedLogError: card declined"}),
    ], service="linked"))
    groups = get(dash_server, API + "/error-groups")["items"]
    (group,) = [g["group"] for g in groups if g["group"]["exception_class"] == "LinkedLogError"]
    view = get(dash_server, f"{API}/error-groups/{group['id']}")
    assert view["event"]["log_time_ns"] == at
    assert (view["event"]["trace_id"], view["event"]["span_id"]) == (trace_id, span)
    session = requests.Session()
    session.headers.update(admin())
    page = session.get(f"{dash_server.base}/projects/acme/errors/{group['id']}", timeout=10).text
    href = page.split('class="log-record-link" href="')[1].split('"')[0].replace("&amp;", "&")
    query = parse_qs(urlparse(href).query)
    assert query["trace_id"] == [trace_id] and query["at"] == [str(at)]
    logs_page = session.get(dash_server.base + href, timeout=10).text
    assert 'class="log sev-error linked"' in logs_page and "charge failed" in logs_page
