"""Single sign-on against a real OpenID provider: the certified `oidc-provider` npm
package, run by tests/js/oidc_provider.mjs on a free port, and the real collector
configured with it as two providers (two buttons). Logins follow the provider's own
login form with `requests`, as a browser would.

What is refused is made by the provider script: a token whose payload was edited
after signing ("tamper"), and tokens signed again with the provider's own current
key after setting another `aud`, `iss` or `nonce`, an `exp` an hour ago, or a `kid` the
provider never published (the provider itself issues none of these; the script signs them with the
key it serves in its JWKS, as a provider that got them wrong would).

One provider process and one collector serve the module (tests/dashboard/conftest.py:
`idp`, `sso`; the SSO-only switch starts a second collector on the same database); each
test uses accounts of its own."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests

from tests.dashboard.data import ADMIN_TOKEN
from tests.dashboard.test_roles import PASSWORD, create_user, password_login
from tests.dashboard.test_sessions import xsrf_of
from tests.support import clients
from tests.support.oidc_provider import PROVIDERS, IdP
from tests.support.server import Server, collectors

pytestmark = pytest.mark.clients(clients.OIDC_PROVIDER)

FORM = re.compile(r'<form[^>]*action="([^"]+)"[^>]*>(.*?)</form>', re.S)
FIELD = re.compile(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"')


def sso_login(server: Server, account: str | None, browser: requests.Session | None = None,
              provider: str = "corp") -> requests.Response:
    """Start at Sounding's button and follow the provider's login form (when the
    provider has no session of `browser` yet) back to Sounding; the last answer, with
    `.browser` set."""
    browser = browser or requests.Session()
    answer = browser.get(f"{server.base}/login/oidc/{provider}?next=/account", timeout=20)
    if "/interaction/" in answer.url:
        assert account is not None, "the provider asks who logs in"
        action, _ = FORM.findall(answer.text)[0]
        answer = browser.post(urljoin(answer.url, html.unescape(action)), timeout=20,
                              data={"prompt": "login", "login": account, "password": "any"})
    answer.browser = browser  # type: ignore[attr-defined]
    return answer


def logged_in(server: Server, account: str, provider: str = "corp") -> requests.Session:
    answer = sso_login(server, account, provider=provider)
    assert answer.status_code == 200 and answer.url == f"{server.base}/account", answer.text
    return answer.browser  # type: ignore[attr-defined, no-any-return]


def account(server: Server, email: str) -> tuple[str, str] | None:
    rows = server.query("SELECT role, password_hash FROM users WHERE email = :e", e=email)
    return None if not rows else (rows[0][0], rows[0][1])


def status(server: Server, browser: requests.Session, path: str = "/api/v1/projects") -> int:
    return browser.get(server.base + path, timeout=10, allow_redirects=False).status_code


def test_the_login_page_has_a_button_per_provider_and_the_password_form(sso: Server) -> None:
    page = requests.get(sso.base + "/login?next=/users", timeout=10).text
    for name in PROVIDERS:
        assert f'href="/login/oidc/{name}?next=%2Fusers"' in page
    assert ">Sign in with corp<" in page and ">Sign in with corp-b<" in page
    assert 'id="password"' in page and 'id="token"' in page


def test_the_first_login_makes_the_account_with_the_role_of_its_groups(
        sso: Server, idp: IdP) -> None:
    assert account(sso, "ana@example.com") is None
    ana = logged_in(sso, "ana")
    assert account(sso, "ana@example.com") == ("admin", "!sso")
    assert sso.query("SELECT provider, subject FROM user_identities u JOIN users a "
                     "ON a.id = u.user_id WHERE a.email = 'ana@example.com'") == [("corp", "ana")]
    assert sso.query("SELECT provider FROM dashboard_sessions s JOIN users a "
                     "ON a.id = s.user_id WHERE a.email = 'ana@example.com'") == [("corp",)]
    assert status(sso, ana, "/users") == 200  # an admin's page
    page = ana.get(sso.base + "/account", timeout=10).text
    assert "identity provider <strong>corp</strong>" in page
    assert "Change your password" not in page
    bo = logged_in(sso, "bo", provider="corp-b")  # the other button: its own identity
    assert account(sso, "bo@example.com") == ("member", "!sso")
    assert status(sso, bo) == 200 and status(sso, bo, "/users") == 403
    # An account made by single sign-on has no password to log in with.
    assert password_login(sso, "bo@example.com", "!sso").status_code == 401


def test_a_changed_group_takes_effect_at_the_next_login_and_none_refuses(
        sso: Server, idp: IdP) -> None:
    first = logged_in(sso, "cy")
    assert account(sso, "cy@example.com") == ("viewer", "!sso")
    idp.control("account", id="cy", groups=["staff", "sounding-viewers"])
    assert account(sso, "cy@example.com") == ("viewer", "!sso")  # not before a login
    again = sso_login(sso, None, browser=first)
    assert again.url == f"{sso.base}/account"  # the provider's session: no form again
    assert account(sso, "cy@example.com") == ("member", "!sso")  # the highest role
    idp.control("account", id="cy", groups=["interns"])
    refused = sso_login(sso, None, browser=first)
    assert refused.status_code == 403
    assert "no group or role that gives access to Sounding" in refused.text
    assert status(sso, first) == 401  # the account's sessions ended


def test_an_account_whose_groups_map_to_no_role_is_refused_and_not_made(sso: Server) -> None:
    refused = sso_login(sso, "dee")
    assert refused.status_code == 403 and "ask an administrator to add you" in refused.text
    assert "Signed in as dee@example.com" in refused.text
    assert account(sso, "dee@example.com") is None
    assert status(sso, refused.browser) == 401  # type: ignore[attr-defined]


def test_an_unverified_email_does_not_take_over_an_account(sso: Server) -> None:
    create_user(sso.db_url, "eve@example.com", "admin")
    refused = sso_login(sso, "eve")
    assert refused.status_code == 403 and "does not say the address is verified" in refused.text
    assert account(sso, "eve@example.com")[0] == "admin"  # type: ignore[index]
    assert password_login(sso, "eve@example.com", PASSWORD).status_code == 303


@pytest.mark.parametrize(("mode", "says"), [
    ("tamper", "signature does not verify"),
    ("aud", "Invalid claim: &#x27;aud&#x27;"),
    ("iss", "Invalid claim: &#x27;iss&#x27;"),
    ("nonce", "Invalid claim: &#x27;nonce&#x27;"),
    ("expired", "The token is expired"),
])
def test_a_bad_id_token_is_refused(sso: Server, idp: IdP, mode: str, says: str) -> None:
    idp.control("mangle", mode=mode)
    refused = sso_login(sso, "ana")
    assert refused.status_code == 401 and says in refused.text, refused.text
    assert "sounding_session" not in refused.browser.cookies  # type: ignore[attr-defined]
    sso.wait_for_log("single sign-on refused through corp")


def test_a_callback_not_started_in_this_browser_or_from_another_issuer_is_refused(
        sso: Server, idp: IdP) -> None:
    answer = requests.get(f"{sso.base}/login/oidc/corp/callback?code=abc&state=xyz",
                          timeout=10)
    assert answer.status_code == 400 and "not started in this browser" in answer.text
    assert requests.get(f"{sso.base}/login/oidc/nobody", timeout=10).status_code == 404
    browser = requests.Session()
    started = browser.get(f"{sso.base}/login/oidc/corp", timeout=10, allow_redirects=False)
    assert started.status_code == 303 and started.headers["Location"].startswith(idp.url)
    sent = parse_qs(urlsplit(started.headers["Location"]).query)
    assert sent["code_challenge_method"] == ["S256"] and sent["nonce"] and sent["state"]
    callback = f"{sso.base}/login/oidc/corp/callback"
    state = sent["state"][0]
    mixed_up = browser.get(callback, params={"code": "abc", "state": state,
                                             "iss": "http://127.0.0.1:1"}, timeout=10)
    assert mixed_up.status_code == 401 and "another identity provider" in mixed_up.text
    # The attempt's cookie is spent on any answer: a second try must start again.
    again = browser.get(callback, params={"error": "access_denied", "state": state}, timeout=10)
    assert again.status_code == 400 and "not started in this browser" in again.text
    fresh = parse_qs(urlsplit(browser.get(f"{sso.base}/login/oidc/corp", timeout=10,
                                          allow_redirects=False).headers["Location"]).query)
    denied = browser.get(callback, params={"error": "access_denied", "state": fresh["state"][0],
                                           "error_description": "End-User aborted"}, timeout=10)
    assert denied.status_code == 401
    assert "corp did not sign you in: access_denied (End-User aborted)" in denied.text


def test_a_key_rotated_at_the_provider_is_fetched_once(sso: Server, idp: IdP) -> None:
    logged_in(sso, "ana")  # the keys before the rotation are known
    fetched = idp.jwks_fetches()
    idp.control("rotate")
    logged_in(sso, "ana")  # signed with the new key: the JWKS is fetched again
    assert idp.jwks_fetches() == fetched + 1
    idp.control("mangle", mode="kid")
    refused = sso_login(sso, "ana")
    assert refused.status_code == 401 and "invalid_key_id" in refused.text, refused.text
    assert idp.jwks_fetches() == fetched + 1  # a miss right after a fetch fetches nothing


def test_logout_ends_the_session_here_and_at_the_provider(sso: Server, idp: IdP) -> None:
    browser = logged_in(sso, "ana")
    xsrf = xsrf_of(browser.get(sso.base + "/account", timeout=10).text)
    out = browser.post(sso.base + "/logout", data={"_xsrf": xsrf}, timeout=10,
                       allow_redirects=False)
    # A page that moves on by itself (not a redirect: see dashboard/pages.py).
    assert out.status_code == 200 and out.headers["Refresh"].startswith("0; url=")
    end = out.headers["Refresh"].removeprefix("0; url=")
    assert f'href="{html.escape(end)}"' in out.text
    where = urlsplit(end)
    assert f"{where.scheme}://{where.netloc}{where.path}" == f"{idp.url}/session/end"
    assert parse_qs(where.query) == {"client_id": ["sounding"],
                                     "post_logout_redirect_uri": [f"{sso.base}/login"]}
    assert status(sso, browser) == 401  # ended here before the provider is asked
    confirm = browser.get(end, timeout=10)
    action, form = FORM.findall(confirm.text)[0]
    fields = dict(FIELD.findall(form))
    back = browser.post(urljoin(confirm.url, html.unescape(action)), timeout=10,
                        data={**fields, "logout": "yes"})
    assert back.url == f"{sso.base}/login" and back.status_code == 200
    # The provider's session ended too: the next sign-in asks who logs in.
    again = browser.get(f"{sso.base}/login/oidc/corp", timeout=20)
    assert "/interaction/" in again.url


def test_sso_only_turns_password_logins_off_but_not_the_admin_token(
        sso: Server, idp: IdP, sso_folder: Path) -> None:
    create_user(sso.db_url, "fay@example.com", "member")
    with collectors(sso_folder) as start:
        only = start(sso.db_url, config=str(sso_folder / "sounding.yaml"),
                     env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN,
                          "SOUNDING__DASHBOARD__SSO_ONLY": "true"})
        idp.register(sso, only)
        page = requests.get(only.base + "/login", timeout=10).text
        assert 'id="password"' not in page and 'id="token"' in page
        assert 'href="/login/oidc/corp' in page
        refused = password_login(only, "fay@example.com")
        assert refused.status_code == 403 and "Password login is turned off" in refused.text
        assert password_login(sso, "fay@example.com").status_code == 303  # the other allows
        browser = requests.Session()
        xsrf = xsrf_of(browser.get(only.base + "/login", timeout=10).text)
        token = browser.post(only.base + "/login", data={"_xsrf": xsrf, "token": ADMIN_TOKEN},
                             timeout=10, allow_redirects=False)
        assert token.status_code == 303  # the break-glass login
        assert status(only, logged_in(only, "ana")) == 200
