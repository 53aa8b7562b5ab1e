"""The traces search over HTTP against the real server: pages and totals, attribute
terms, clear 400s, and the header's trace-id box."""

from __future__ import annotations

from typing import Any

import requests

from tests.dashboard.data import ADMIN_TOKEN, XSS, checkout_trace, post_ok
from tests.support.server import Server

API = "/api/v1/projects/acme"


def admin() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def get(server: Server, path: str, **params: Any) -> requests.Response:
    return requests.get(server.base + path, headers=admin(), params=params, timeout=10,
                        allow_redirects=False)


def test_search_pages_with_total_and_terms(dash_server: Server) -> None:
    sent = []
    for i in range(5):
        trace_id, body = checkout_trace(service="paged", failing=i % 2 == 0)
        post_ok(dash_server, "/ingest/v1/traces", body)
        sent.append(trace_id)
    first = get(dash_server, API + "/traces", service="paged", limit=2, range="1h").json()
    second = get(dash_server, API + "/traces", service="paged", limit=2, offset=2,
                 range="1h").json()
    assert first["page"]["total"] == 5 and second["page"]["total"] == 5
    shown = [t["trace_id"] for t in first["page"]["items"] + second["page"]["items"]]
    assert len(set(shown)) == 4 and set(shown) <= set(sent)
    assert "paged" in first["services"] and "GET /checkout" in first["operations"]
    failing = get(dash_server, API + "/traces", service="paged", range="1h",
                  q="http.status_code=500 http.route exists duration>100ms").json()
    assert failing["page"]["total"] == 3
    assert get(dash_server, API + "/traces", service="paged", range="1h",
               q='tax.region="EU" duration<1ms').json()["page"]["total"] == 0


def test_bad_queries_are_400s_naming_the_problem(dash_server: Server) -> None:
    for params, names in [({"q": "size>3"}, "only duration"),
                          ({"q": 'a="open'}, "No closing quotation"),
                          ({"limit": "0"}, "'limit'"), ({"offset": "-1"}, "'offset'"),
                          ({"status": "bad"}, "status")]:
        response = get(dash_server, API + "/traces", **params)
        assert response.status_code == 400 and names in response.text, (params, response.text)
    page = get(dash_server, "/projects/acme/traces", q="duration>fast")
    assert page.status_code == 400 and "duration&gt;fast" in page.text


def test_the_trace_id_box_goes_to_the_trace_or_says_it_is_unknown(dash_server: Server
                                                                   ) -> None:
    trace_id, body = checkout_trace(service="lookup")
    post_ok(dash_server, "/ingest/v1/traces", body)
    html = get(dash_server, "/projects/acme/errors").text
    assert 'class="trace-lookup"' in html and 'action="/projects/acme/traces/lookup"' in html
    found = get(dash_server, "/projects/acme/traces/lookup", id=f" {trace_id.upper()} ")
    assert found.status_code == 303
    assert found.headers["Location"] == f"/projects/acme/traces/{trace_id}"
    unknown = get(dash_server, "/projects/acme/traces/lookup", id="ab" * 16)
    missing = get(dash_server, unknown.headers["Location"])
    assert missing.status_code == 404 and f"no trace {'ab' * 16}" in missing.text
    bad = get(dash_server, "/projects/acme/traces/lookup", id=XSS)
    assert bad.status_code == 400 and "hexadecimal" in bad.text and XSS not in bad.text


def test_the_page_keeps_its_state_in_links_and_escapes_the_query(dash_server: Server
                                                                 ) -> None:
    for _ in range(3):
        post_ok(dash_server, "/ingest/v1/traces", checkout_trace(service="state")[1])
    html = get(dash_server, "/projects/acme/traces", service="state", range="1h",
               q=f'x="{XSS}"').text
    assert XSS not in html and "&lt;script&gt;" in html
    html = get(dash_server, "/projects/acme/traces", service="state", range="1h").text
    assert "1–3 of 3" in html and html.count('class="dot-link"') == 3
