"""Text stack traces on the group page (dashboard/occurrence.text_chain over
model/stacktrace), from the real server: a Python traceback sent as an OTLP span's
exception event and a Java one sent to /ingest/errors are drawn as frames innermost
first, library frames folded, the raw text one toggle away; text that is no trace keeps
the numbered lines."""

from __future__ import annotations

import html
import re
import secrets
import time

import requests

from tests.dashboard.data import ADMIN_TOKEN, attr, error, post_ok, span
from tests.support.server import Server

API = "/api/v1/projects/acme"
PYTHON = ('Traceback (most recent call last):\n'
          '  File "/srv/shop/views.py", line 10, in checkout\n    charge(card)\n'
          '  File "/usr/lib/python3.11/site-packages/stripe/api.py", line 7, in call\n'
          '    return self.request()\n'
          '  File "/srv/shop/billing.py", line 42, in charge\n'
          '    raise StackParsedError("no <funds>")\n'
          'StackParsedError: no <funds>')
JAVA = ["com.acme.OrderFailed: order 17 failed",
        "\tat com.acme.OrderService.place(OrderService.java:88)",
        "\tat java.base/java.lang.Thread.run(Thread.java:833)",
        "Caused by: java.sql.SQLException: connection refused",
        "\tat com.acme.Db.open(Db.java:12)",
        "\t... 2 more"]


def admin() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def group_page(server: Server, exception_class: str) -> str:
    listed = requests.get(server.base + API + "/error-groups", headers=admin(), timeout=10,
                          params={"status": "all"}).json()["items"]
    (group,) = [i["group"] for i in listed if i["group"]["exception_class"] == exception_class]
    response = requests.get(f"{server.base}/projects/acme/errors/{group['id']}",
                            headers=admin(), timeout=10)
    assert response.status_code == 200, response.text
    return response.text


def frames_shown(page: str) -> list[str]:
    """(function, line) of each frame drawn, in page order."""
    return [f"{html.unescape(fn)}:{line}" for fn, line in re.findall(
        r'<code class="frame-function">([^<]*)</code> at line <span class="frame-lineno">'
        r'(\d+)</span>', page)]


def test_a_python_traceback_from_a_span_event_is_drawn_as_frames(dash_server: Server
                                                                  ) -> None:
    trace_id = secrets.token_hex(16)
    failing = span(trace_id, "POST /checkout", time.time_ns() - 10**9, 50, kind=2,
                   error=True)
    failing["events"] = [{"name": "exception", "timeUnixNano": str(time.time_ns()),
                          "attributes": [attr("exception.type", "StackParsedError"),
                                         attr("exception.message", "no <funds>"),
                                         attr("exception.stacktrace", PYTHON)]}]
    post_ok(dash_server, "/ingest/v1/traces", {"resourceSpans": [{
        "resource": {"attributes": [attr("service.name", "shop")]},
        "scopeSpans": [{"scope": {"name": "tests"}, "spans": [failing]}]}]})
    page = group_page(dash_server, "StackParsedError")
    assert 'class="chain"' in page and 'class="backtrace"' not in page
    # innermost first; the site-packages frame folded between the two in-app ones
    assert frames_shown(page) == ["charge:42", "call:7", "checkout:10"]
    assert re.search(r'<summary>1 library frame</summary>\s*<div class="frame library">',
                     page)
    assert "<td><code>raise StackParsedError(&quot;no &lt;funds&gt;&quot;)</code>" in page
    raw = re.search(r'<pre class="raw-trace-text">(.*?)</pre>', page, re.DOTALL)
    assert raw is not None and html.unescape(raw.group(1)).strip() == PYTHON
    assert "<li><code>Traceback (most recent call last):" not in page


def test_a_java_trace_sent_to_ingest_errors_shows_its_cause_first(dash_server: Server
                                                                  ) -> None:
    post_ok(dash_server, "/ingest/errors", error(
        "java-stack", exception_class="com.acme.OrderFailed", message="order 17 failed",
        backtrace=JAVA, source_context=None))
    page = group_page(dash_server, "com.acme.OrderFailed")
    assert "root cause first, 2 exceptions" in page
    heads = re.findall(r'<span class="exception-type">([^<]*)</span>', page)
    assert heads == ["java.sql.SQLException", "com.acme.OrderFailed"]
    # the cause's `... 2 more` repeats the raised exception's two outermost frames
    assert frames_shown(page) == ["open:12", "place:88", "run:833", "place:88", "run:833"]
    assert "The above exception was the direct cause of the following exception:" in page


def test_text_that_is_no_trace_keeps_the_numbered_lines(dash_server: Server) -> None:
    post_ok(dash_server, "/ingest/errors", error(
        "not-a-trace", exception_class="NotATraceError", backtrace=["first", "second"]))
    page = group_page(dash_server, "NotATraceError")
    assert 'class="chain"' not in page and 'class="raw-trace"' not in page
    assert "<li><code>first</code></li>" in page


def test_the_source_context_sent_beside_a_text_trace_is_shown_on_its_frame(
        dash_server: Server) -> None:
    post_ok(dash_server, "/ingest/errors", error(
        "py-with-source", exception_class="SourcedError", backtrace=[
            "Traceback (most recent call last):",
            '  File "/srv/app/views.py", line 10, in checkout',
            '  File "/srv/app/billing.py", line 42, in total',
            "SourcedError: division by zero"]))
    page = group_page(dash_server, "SourcedError")
    assert frames_shown(page) == ["total:42", "checkout:10"]
    # the context (app/billing.py, line 42) belongs to the innermost frame only
    assert len(re.findall(r'<table class="source frame-source">', page)) == 1
    assert re.search(r'<tr class="failing"><td class="lineno">42</td><td><code>    return '
                     r'subtotal / count</code>', page)
    assert re.search(r'<td class="lineno">41</td><td><code>    subtotal = sum\(items\)', page)
