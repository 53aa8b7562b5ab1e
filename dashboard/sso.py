"""Single sign-on through OpenID Connect: GET /login/oidc/<provider> sends the browser
to the provider's login page, GET /login/oidc/<provider>/callback brings it back
logged in, its account made or re-roled by storage/accounts/identities.py.

What ties the callback to the browser that started it is a short-lived signed
cookie (dashboard/auth.py, SSO_COOKIE) holding the `state`, the `nonce` and the PKCE
verifier: a callback whose `state` is not that cookie's is refused, so nobody can
log a victim's browser in as themselves with a code of their own. The cookie is
SameSite=Lax: the provider's redirect back is a top-level GET, which carries it.

The redirect URI is the dashboard's own address as the browser reaches it
(`/login/oidc/<name>/callback` on the scheme and host of the request; behind a
TLS-terminating proxy set `xheaders`), and must be registered at the provider.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from tornado.web import HTTPError

from dashboard.auth import SESSION_COOKIE, SSO_COOKIE, SSO_DAYS
from dashboard.base import DashboardHandler
from dashboard.oidc import Provider, ProviderError, TokenRefused, pkce_pair
from dashboard.pages import _safe_next, render_login
from storage.accounts import identities

log = logging.getLogger(__name__)
SSO_PATH = "/login/oidc"


class SsoHandler(DashboardHandler):
    login_required = False

    def provider(self, name: str) -> Provider:
        found = self.dash.providers.get(name)
        if found is None:
            raise HTTPError(404, f"no identity provider {name!r} is configured")
        return found

    def redirect_uri(self, name: str) -> str:
        return f"{self.request.protocol}://{self.request.host}{SSO_PATH}/{name}/callback"

    def refuse(self, status: int, problem: str) -> None:
        self.clear_cookie(SSO_COOKIE, path=SSO_PATH)
        render_login(self, "/", problem, status=status)


class SsoStart(SsoHandler):
    """GET /login/oidc/{provider}[?next=/path]."""

    async def get(self, name: str) -> None:
        provider = self.provider(name)
        verifier, challenge = pkce_pair()
        attempt = {"provider": name, "state": secrets.token_urlsafe(24),
                   "nonce": secrets.token_urlsafe(24), "verifier": verifier,
                   "redirect_uri": self.redirect_uri(name),
                   "next": _safe_next(self.get_argument("next", None))}
        try:
            url = await provider.authorization_url(attempt["redirect_uri"], attempt["state"],
                                                   attempt["nonce"], challenge)
        except ProviderError as exc:
            log.warning("single sign-on: %s", exc)
            self.refuse(502, f"The identity provider is not available: {exc}")
            return
        self.set_private_cookie(SSO_COOKIE, self.dash.auth.sso_cookie(attempt), path=SSO_PATH,
                                expires_days=SSO_DAYS)
        self.redirect(url, status=303)


class SsoCallback(SsoHandler):
    """GET /login/oidc/{provider}/callback?code=…&state=… (or ?error=…)."""

    async def get(self, name: str) -> None:
        provider = self.provider(name)
        attempt = self.dash.auth.sso_attempt(self.get_cookie(SSO_COOKIE))
        state = self.get_argument("state", "")
        if attempt is None or attempt.get("provider") != name or not state \
                or not secrets.compare_digest(state.encode(), attempt["state"].encode()):
            self.refuse(400, "This sign-in expired or was not started in this browser. "
                             "Try again.")
            return
        error = self.get_argument("error", None)
        if error is not None:
            described = self.get_argument("error_description", "")
            self.refuse(401, f"{name} did not sign you in: {error}"
                             + (f" ({described})" if described else ""))
            return
        # RFC 9207: a provider that names itself must be the one asked (no mix-up).
        if self.get_argument("iss", provider.settings.issuer) != provider.settings.issuer:
            self.refuse(401, "The answer came from another identity provider than the one "
                             "asked. Try again.")
            return
        code = self.get_argument("code", "")
        if not code:
            self.refuse(400, "The identity provider sent no code. Try again.")
            return
        try:
            id_token = await provider.exchange(code, attempt["redirect_uri"],
                                               attempt["verifier"])
            claims = await provider.verify(id_token, attempt["nonce"])
        except ProviderError as exc:
            log.warning("single sign-on: %s", exc)
            self.refuse(502, f"The identity provider is not available: {exc}")
            return
        except TokenRefused as exc:
            log.warning("single sign-on refused through %s: %s", name, exc)
            self.refuse(401, f"Sign-in through {name} failed: {exc}.")
            return
        email, verified = provider.email_of(claims)
        mapped = provider.role_of(claims)
        who = identities.Claimed(name, claims["sub"], email, verified,
                                 None if mapped is None else mapped.role,
                                 {} if mapped is None else mapped.projects)
        try:
            user = await self.run(identities.login, self.store, who, self.now_us)
        except identities.Refused as exc:
            self.refuse(403, f"Signed in as {email or claims['sub']}, but Sounding refuses "
                             f"you: {exc}.")
            return
        auth = self.dash.auth
        self.clear_cookie(SSO_COOKIE, path=SSO_PATH)
        self.set_private_cookie(SESSION_COOKIE, await auth.new_session(user.id, name),
                                expires_days=auth.session_days)
        self.redirect(attempt["next"], status=303)


def routes(args: dict[str, Any]) -> list[Any]:
    return [
        (SSO_PATH + r"/([a-z0-9][a-z0-9_-]*)", SsoStart, args),
        (SSO_PATH + r"/([a-z0-9][a-z0-9_-]*)/callback", SsoCallback, args),
    ]
