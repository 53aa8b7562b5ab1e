"""The audit log of single sign-on against the real OpenID provider (tests/js/
oidc_provider.mjs) and the real collector: the account a first login makes and the
role a changed group gives at the next login are recorded, each once, as made by the
identity provider; the Audit page shows them."""

from __future__ import annotations

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.dashboard.test_audit import mark, since
from tests.dashboard.test_sso import logged_in, sso_login
from tests.support import clients
from tests.support.oidc_provider import IdP
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.OIDC_PROVIDER)

PROVIDER = ("system", "oidc:corp", "identity provider corp")


def test_the_provider_makes_and_re_roles_accounts_on_the_record(sso: Server,
                                                                idp: IdP) -> None:
    start = mark(sso)
    browser = logged_in(sso, "cy")
    assert since(sso, start) == [{
        "actor": PROVIDER, "action": "user.create",
        "target": ("user", "cy@example.com", None), "before": None,
        "after": {"email": "cy@example.com", "role": "viewer"}}]
    start = mark(sso)
    assert sso_login(sso, None, browser=browser).url == f"{sso.base}/account"
    assert since(sso, start) == []  # the same role: nothing to record
    idp.control("account", id="cy", groups=["sounding-admins"])
    assert sso_login(sso, None, browser=browser).url == f"{sso.base}/account"
    assert since(sso, start) == [{
        "actor": PROVIDER, "action": "user.role", "target": ("user", "cy@example.com", None),
        "before": {"role": "viewer"}, "after": {"role": "admin"}}]
    page = browser.get(sso.base + "/audit", params={"action": "user"}, timeout=10)
    assert page.status_code == 200  # cy is an admin now
    assert page.text.count("identity provider corp") == 2
    api = requests.get(sso.base + "/api/v1/audit", params={"actor": "identity provider corp"},
                       headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=10)
    assert [e["action"] for e in api.json()["entries"]] == ["user.role", "user.create"]
