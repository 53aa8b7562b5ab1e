"""Team accounts in a real browser (Debian's Chromium driven by Playwright): the admin
token's holder adds a member and a viewer on the Users page; the member logs in with
email and password and resolves an error; the viewer logs in, reads the same page,
and is refused (403) when sending the same form. An account of no global role (`none`)
given `member` in acme in the Users page's "In projects" column resolves there."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from tests.dashboard.conftest import login
from tests.dashboard.data import ADMIN_TOKEN, error, post_ok
from tests.support.server import Server

# Long (tests/conftest.py): ~34 s alone.
pytestmark = [pytest.mark.browser, pytest.mark.long]
PASSWORD = "correct horse battery"


def group_url(server: Server) -> str:
    items = requests.get(server.base + "/api/v1/projects/acme/error-groups", timeout=10,
                         params={"status": "all"},
                         headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).json()["items"]
    (item,) = items
    return f"{server.base}/projects/acme/errors/{item['group']['id']}"


def password_login(browser: Any, server: Server, email: str) -> Any:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(server.base + "/login")
    page.fill("#email", email)
    page.fill("#password", PASSWORD)
    page.click("#login-password")
    page.wait_for_load_state()
    assert page.locator("nav.account .me").inner_text() == email
    return page


def test_a_member_resolves_and_a_viewer_is_refused(
        browser: Any, start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    post_ok(server, "/ingest/errors", error("browser-roles"))
    admin_context = browser.new_context()
    admin = admin_context.new_page()
    login(admin, server.base)
    admin.goto(server.base + "/users")
    for email, role in (("mia@example.com", "member"), ("vic@example.com", "viewer")):
        form = admin.locator("form.add-user")
        form.locator("input[name=email]").fill(email)
        form.locator("input[name=password]").fill(PASSWORD)
        form.locator("select[name=role]").select_option(role)
        form.locator("#add-user").click()
        admin.wait_for_load_state()
        assert admin.locator("p.done").inner_text() == "Account added."
    assert admin.locator("tr[data-email]").count() == 2
    admin_context.close()

    url = group_url(server)
    member = password_login(browser, server, "mia@example.com")
    assert member.locator('a[href="/users"]').count() == 0
    member.goto(url)
    member.locator("button.action-resolved").click()
    member.wait_for_load_state()
    assert member.locator("#group-status").inner_text() == "Resolved"
    member.context.close()

    viewer = password_login(browser, server, "vic@example.com")
    viewer.goto(url)
    assert viewer.locator("#group-status").inner_text() == "Resolved"
    with viewer.expect_response(lambda r: r.request.method == "POST") as answer:
        viewer.locator("button.action-open").click()
    assert answer.value.status == 403
    viewer.wait_for_load_state()
    assert "needs the member role" in viewer.content()
    viewer.goto(url)
    assert viewer.locator("#group-status").inner_text() == "Resolved"  # unchanged
    viewer.context.close()


def test_an_admin_gives_a_project_role_on_the_users_page(
        browser: Any, start: Callable[..., Server], sqlite_url: str) -> None:
    server = start(sqlite_url, env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
    post_ok(server, "/ingest/errors", error("browser-project-roles"))
    admin_context = browser.new_context()
    admin = admin_context.new_page()
    login(admin, server.base)
    admin.goto(server.base + "/users")
    form = admin.locator("form.add-user")
    form.locator("input[name=email]").fill("pia@example.com")
    form.locator("input[name=password]").fill(PASSWORD)
    form.locator("select[name=role]").select_option("none")
    form.locator("#add-user").click()
    admin.wait_for_load_state()
    row = admin.locator('tr[data-email="pia@example.com"]')
    row.locator("select[name=project]").select_option("acme")
    row.locator('select[aria-label="Role in the project of pia@example.com"]'
                ).select_option("member")
    row.locator("td.project-roles button").click()
    admin.wait_for_load_state()
    assert admin.locator("p.done").inner_text() == "Project role changed."
    assert admin.locator('tr[data-email="pia@example.com"] .project-role'
                         ).inner_text() == "acme: member"
    admin_context.close()

    url = group_url(server)
    member = password_login(browser, server, "pia@example.com")
    member.goto(url)
    member.locator("button.action-resolved").click()
    member.wait_for_load_state()
    assert member.locator("#group-status").inner_text() == "Resolved"
    member.context.close()
