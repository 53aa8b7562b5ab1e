"""The group page (dashboard/templates/group.html and its partials), as HTML from the
real server: the tag distribution and first release, the occurrence's level, tags,
exception chain with per-frame source context, user, request, contexts and
breadcrumbs; the fallback for errors sent without a chain; and client text escaped."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN, XSS, error, post_ok
from tests.dashboard.sentry_data import post_event, sentry_event
from tests.support.server import Projects, Server, collectors, project_keys


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Projects]:
    """One SQLite collector for the module, with the tests' admin token."""
    with collectors(tmp_path_factory.mktemp("group-page")) as start:
        yield Projects(start(keys=project_keys(), env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN}))


@pytest.fixture
def sentry(projects: Projects) -> Server:
    """The module's collector, as a project of this test's own sees it."""
    return projects.take()


def admin() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def group_page(server: Server, exception_class: str | None = None) -> str:
    """The page of the one group (of `exception_class`, when given)."""
    listed = requests.get(server.project_api("/error-groups"), headers=admin(), timeout=10,
                          params={"status": "all"}).json()["items"]
    (group,) = [i["group"] for i in listed
                if exception_class in (None, i["group"]["exception_class"])]
    response = requests.get(server.project_url(f"/errors/{group['id']}"),
                            headers=admin(), timeout=10)
    assert response.status_code == 200, response.text
    return response.text


def test_the_tag_distribution_and_first_release(sentry: Server) -> None:
    post_event(sentry, sentry_event(release="shop@2.3.0", timestamp=1_763_632_700))
    for browser in ("Firefox 128", "Firefox 128", "Chrome 131"):
        post_event(sentry, sentry_event(tags={"browser": browser, "os": "Linux"}))
    page = group_page(sentry, "LookupError")
    assert re.search(r'class="first-release">shop@2\.3\.0<', page)
    facets = re.findall(r'<div class="facet" data-facet="([^"]+)"', page)
    # The fields first, then the tags by key (storage/queries/facets.py); the door
    # adds tags of its own (mechanism, handled, runtime...), as Sentry does.
    assert facets[:4] == ["environment", "release", "service", "level"]
    tags = facets[4:]
    assert tags == sorted(tags) and {"browser", "customer", "os"} <= set(tags)
    browser = page[page.index('data-facet="browser"'):]
    browser = browser[:browser.index("</table>")]
    rows = re.findall(r'<code>([^<]+)</code></td>.*?class="num share">([^<]+)</td>\s*'
                      r'<td class="num count">([^<]+)</td>', browser, re.S)
    # Four events: the first had the event's own browser, Firefox 128.
    assert rows == [("Firefox 128", "75.0%", "3"), ("Chrome 131", "25.0%", "1")]


def test_the_occurrence_shows_level_environment_release_and_tags(sentry: Server) -> None:
    post_event(sentry, sentry_event())
    page = group_page(sentry, "LookupError")
    occurrence = page[page.index('class="panel occurrence"'):]
    assert 'class="badge level level-error">error<' in occurrence
    assert re.search(r'class="environment">production<', occurrence)
    assert re.search(r'class="release">shop@2\.4\.0<', occurrence)
    tags = occurrence[occurrence.index('class="kv event-tags"'):]
    tags = tags[:tags.index("</table>")]
    shown = re.findall(r"<th>([^<]+)</th><td><code>([^<]+)</code>", tags)
    assert [k for k, _ in shown] == sorted(k for k, _ in shown)  # by key
    assert {("browser", "Firefox 128"), ("customer", "gold"), ("os", "Linux")} <= set(shown)


def test_the_chain_root_cause_first_frames_innermost_first_with_source(
        sentry: Server) -> None:
    post_event(sentry, sentry_event())
    page = group_page(sentry, "LookupError")
    chain = page[page.index('class="chain"'):page.index('<h3>Params</h3>')]
    assert re.findall(r'class="exception-type">([^<]+)<', chain) == ["KeyError", "LookupError"]
    # The root cause's mechanism says it was being handled when the next was raised.
    assert "During handling of the above exception, another exception occurred:" in chain
    raised = chain[chain.index('exception-type">LookupError'):]
    functions = re.findall(r'class="frame-function">([^<]+)<', raised)
    assert functions == ["load_order", "checkout", "dispatch"]  # innermost first
    # In-app frames are open; the library frame is folded away.
    assert re.search(r'<div class="frame in-app">\s*<p class="frame-where"><code '
                     r'class="frame-path">app/orders\.py</code>', raised)
    library = raised[raised.index('<details class="frame-run library">'):]
    assert "1 library frame<" in library and "site-packages/flask/app.py" in library
    # Each frame's context with line numbers, the failing line marked.
    inner = raised[:raised.index('frame-function">checkout')]
    lines = re.findall(r'<tr( class="failing")?><td class="lineno">(\d*)</td><td><code>'
                       r'([^<]*)</code>', inner)
    assert [(n, bool(f)) for f, n, _ in lines] == [("14", False), ("15", False),
                                                   ("16", False), ("17", True)]
    assert html.unescape(lines[-1][2]) == '        raise LookupError(f"order {order_id} not found")'
    assert "return orders[order_id]" in chain  # the root cause's frame has its own


def test_user_request_contexts_and_breadcrumbs(sentry: Server) -> None:
    post_event(sentry, sentry_event())
    page = group_page(sentry, "LookupError")

    def table(css: str) -> list[tuple[str, str]]:
        part = page[page.index(css):]
        part = part[:part.index("</table>")]
        return [(k, html.unescape(v)) for k, v in
                re.findall(r"<th>([^<]+)</th><td><code>([^<]*)</code>", part)]
    assert ("email", "ada@example.com") in table('class="kv user"')
    request = table('class="kv request"')
    assert request[:4] == [("method", "POST"), ("url", "https://shop.example/checkout"),
                           ("query_string", "step=pay"), ("data", '{"order": 42}')]
    assert ("header User-Agent", "Firefox/128.0") in request
    assert table('data-context="browser"') == [("name", "Firefox"), ("version", "128.0")]
    assert ("version", "3.11.9") in table('data-context="runtime"')
    assert ("trace_id", "0af7651916cd43dd8448eb211c80319c") in table('data-context="trace"')
    crumbs = re.findall(r'<time>([^<]+)</time></td><td class="crumb-category">([^<]*)</td>\s*'
                        r'<td class="crumb-level">([^<]*)</td><td class="crumb-message">'
                        r'([^<]*)', page)
    assert [(t, c, lv, m.strip()) for t, c, lv, m in crumbs] == [
        ("10:00:00.250", "http", "info", "GET /cart"),
        ("10:00:01.500", "query", "warning", "SELECT * FROM orders WHERE id = 42")]
    assert '<code class="crumb-data">{&quot;status_code&quot;: 200}</code>' in page


def test_a_message_event_shows_its_logentry(sentry: Server) -> None:
    event = sentry_event(logentry={"message": "payment %s declined", "params": ["p-9"],
                                   "formatted": "payment p-9 declined"}, level="warning")
    del event["exception"]
    post_event(sentry, event)
    page = group_page(sentry)
    assert re.search(r'<pre class="logentry">payment p-9 declined</pre>', page)
    assert 'level-warning">warning<' in page


def test_an_error_without_a_chain_keeps_the_source_and_backtrace_view(sentry: Server) -> None:
    post_ok(sentry, "/ingest/errors", error("plain", exception_class="PlainError",
                                            tags={"region": "eu"}))
    page = group_page(sentry, "PlainError")
    assert 'class="chain"' not in page
    assert re.search(r'<tr class="failing"><td class="lineno">42</td><td><code>    return '
                     r'subtotal / count</code>', page)
    assert "<li><code>app/billing.py:42 in total</code></li>" in page
    assert 'data-facet="region"' in page


def test_client_strings_are_escaped_in_tags_frames_and_breadcrumbs(sentry: Server) -> None:
    event = sentry_event(tags={"browser": XSS})
    event["exception"]["values"][1]["stacktrace"]["frames"][2]["context_line"] = XSS
    event["breadcrumbs"]["values"][0]["message"] = XSS
    event["user"]["username"] = XSS
    post_event(sentry, event)
    page = group_page(sentry, "LookupError")
    assert XSS not in page
    escaped = html.escape(XSS, quote=False)
    assert page.count(escaped) >= 4  # the tag (table and facet), frame line, crumb, user
    assert f'<tr class="failing"><td class="lineno">17</td><td><code>{escaped}</code>' in page
    assert f'<td class="crumb-message">{escaped}' in page
