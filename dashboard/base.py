"""The base of every dashboard and read-API handler: login, cross-site request
forgery, security headers, errors, and the project and time range of the URL.

Tornado's own `xsrf_cookies` setting is application-wide and would refuse the
ingest endpoints' POSTs, so the check is made here instead: every state-changing
request that authenticates with the session cookie must carry the `_xsrf` token
(form field or X-XSRFToken header) derived from that session (dashboard/auth.py),
and the login form one derived from its own signed nonce cookie. Tornado's
double-submit check (a cookie equal to a field) is not used: an attacker able to
set one cookie on the victim's browser could choose both. A request with
`Authorization: Bearer <admin token or personal token>` carries no ambient credential
a forged cross-site request could use, so it needs none.

Roles (viewer < member < admin) are checked here, server-side, before any handler
runs: a request of another method than GET/HEAD/OPTIONS needs the handler's
`write_role` ("member" unless the class says otherwise), so a new POST route is
closed to viewers by default; handlers may ask for more with require_role().
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from tornado.web import HTTPError, RequestHandler

from dashboard import format as fmt
from dashboard import timerange
from dashboard.auth import LOGIN_COOKIE, LOGIN_FORM_DAYS, SESSION_COOKIE, AdminAuth
from sounding.extensions.alerts.admin import AlertsAdmin
from sounding.timeutil import now_us
from storage.queries import projects as pq
from storage.queries.newest import newest_us
from storage.queries.values import finite
from storage.sessions import Login
from storage.store import Store

TEMPLATES = Path(__file__).parent / "templates"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# Scripts and styles come only from our own static files; nothing inline runs, so
# even a missed escape could not execute.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")

T = TypeVar("T")
INT64_MAX = 2**63 - 1
log = logging.getLogger(__name__)


def json_text(document: Any) -> str:
    """Strictly valid JSON: no NaN or Infinity tokens, which JSON.parse and most
    clients refuse. A non-finite number (from a stored value or computed from stored
    numbers) is written as the string "NaN", "Infinity" or "-Infinity". "</" is
    escaped, so the text is safe even if sniffed as HTML or put in an attribute."""
    try:
        text = json.dumps(document, allow_nan=False)
    except ValueError:
        text = json.dumps(finite(document), allow_nan=False)
    return text.replace("</", "<\\/")


class DashboardContext:
    """What dashboard handlers are given: the store, the admin auth and the settings."""

    def __init__(self, store: Store, auth: AdminAuth,
                 settings: dict[str, Any] | None = None) -> None:
        self.store = store
        self.auth = auth
        self.settings = settings or {}  # the `dashboard:` section
        # The alerts extension's settings logic, once the service has built it
        # (dashboard/extension.py); None while it is disabled.
        self.alerts: AlertsAdmin | None = None


class DashboardHandler(RequestHandler):
    api = False  # JSON errors and 401 instead of HTML and a redirect to the login
    login_required = True
    # The least role that may send this handler anything but GET/HEAD/OPTIONS.
    write_role = "member"

    def initialize(self, dash: DashboardContext) -> None:
        self.dash = dash
        self.store = dash.store
        self.now_us = now_us()
        self.via_bearer = False
        self.logged_in = False
        self.session_token: str | None = None  # of a valid session cookie
        self.login: Login | None = None  # who is logged in
        self._login_nonce: str | None = None
        self.project: pq.Project | None = None
        self.projects: list[pq.Project] = []
        self.chosen_range: timerange.TimeRange | None = None  # see page_range()

    def get_template_path(self) -> str:
        return str(TEMPLATES)

    def set_default_headers(self) -> None:
        self.set_header("Server", "sounding")
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("Referrer-Policy", "same-origin")
        self.set_header("Cache-Control", "no-store")

    async def prepare(self) -> None:
        if not self.login_required:
            return
        self.logged_in = await self._authenticated()
        if not self.logged_in:
            if self.api or self.request.method not in SAFE_METHODS:
                raise HTTPError(401, "log in first: send 'Authorization: Bearer <admin token>' "
                                     "or the session cookie of /login")
            target = self.request.uri or "/"
            self.redirect("/login?" + urlencode({"next": target}))
            return
        if self.request.method not in SAFE_METHODS:
            if not self.via_bearer:
                self.check_xsrf_cookie()
            self.require_role(self.write_role)

    # Who is acting, and what they may do: a team account (its email and role), or
    # the admin token's holder, an admin.
    ROLES = ("viewer", "member", "admin")

    def actor(self) -> str:
        """The name recorded for a change this request makes (audit trail)."""
        return self.login.email if self.login else "admin token"

    def role(self) -> str:
        """The logged-in role: one of ROLES (none logged in: the least)."""
        return self.login.role if self.login else "viewer"

    def can(self, role: str) -> bool:
        """Whether the login has at least `role` (templates hide what it may not do;
        the server refuses it regardless)."""
        return self.ROLES.index(self.role()) >= self.ROLES.index(role)

    def require_role(self, role: str) -> None:
        """Refuse (403) a request whose login has less than `role`, server-side."""
        if self.ROLES.index(self.role()) < self.ROLES.index(role):
            raise HTTPError(403, f"this needs the {role} role")

    async def _authenticated(self) -> bool:
        header = self.request.headers.get("Authorization")
        if header is not None:
            scheme, _, token = header.strip().partition(" ")
            # Ingest keys never read: only the admin token and personal tokens here.
            if scheme.lower() != "bearer" or not token.strip():
                return False
            self.login = await self.dash.auth.bearer(token.strip())
            self.via_bearer = self.login is not None
            return self.via_bearer
        found = await self.dash.auth.session(self.get_cookie(SESSION_COOKIE))
        if found is None:
            return False
        self.session_token, self.login = found
        return True

    # Cookies and anti-forgery tokens.

    def set_private_cookie(self, name: str, value: bytes, path: str = "/",
                           expires_days: float | None = None) -> None:
        """HttpOnly, SameSite=Lax, and Secure whenever the request came over HTTPS (as
        seen by Sounding, or by a trusted proxy with `receivers.http.xheaders`)."""
        self.set_cookie(name, value, httponly=True, samesite="Lax", path=path,
                        secure=self.request.protocol == "https", expires_days=expires_days)

    @property
    def xsrf_token(self) -> bytes:
        """The anti-forgery token of forms (`xsrf_form_html`) and of X-XSRFToken: bound
        to this request's session, or, without one (the login form), to a nonce in a
        short-lived signed cookie, set here when missing."""
        auth = self.dash.auth
        if self.via_bearer:  # needs none (see above): no login cookie for API clients
            return b""
        if self.session_token is not None:
            return auth.session_xsrf(self.session_token).encode()
        if self._login_nonce is None:
            self._login_nonce = auth.login_nonce(self.get_cookie(LOGIN_COOKIE))
            if self._login_nonce is None:
                cookie, self._login_nonce = auth.new_login_cookie()
                self.set_private_cookie(LOGIN_COOKIE, cookie, path="/login",
                                        expires_days=LOGIN_FORM_DAYS)
        return auth.login_xsrf(self._login_nonce).encode()

    def check_xsrf_cookie(self) -> None:
        sent = (self.get_argument("_xsrf", None) or self.request.headers.get("X-Xsrftoken")
                or self.request.headers.get("X-Csrftoken") or "")
        expected = self.xsrf_token
        if not expected or not hmac.compare_digest(sent.encode(), expected):
            raise HTTPError(403, "the '_xsrf' field or X-XSRFToken header is missing or "
                                 "does not belong to this session; reload the page")

    # Errors.

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        message = self._reason or "error"
        if isinstance(exc, HTTPError) and exc.log_message and status_code < 500:
            message = exc.log_message % exc.args if exc.args else exc.log_message
        if status_code == 401:
            self.set_header("WWW-Authenticate", 'Bearer realm="sounding"')
        if self.api:
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps({"error": message}))
            return
        self.render("error.html", status=status_code, message=message)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, HTTPError) and value.status_code < 500:
            return
        super().log_exception(typ, value, tb)

    # What handlers share.

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A blocking query, off the event loop that also serves ingest."""
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def load_project(self, name: str) -> pq.Project:
        self.projects = await self.run(pq.list_projects, self.store)
        project = next((p for p in self.projects if p.name == name), None)
        if project is None:
            raise HTTPError(404, f"there is no project named {name!r}")
        self.project = project
        return project

    def time_range(self, default: str = "24h") -> timerange.TimeRange:
        try:
            return timerange.parse(self.get_argument("range", None),
                                   self.get_argument("from", None),
                                   self.get_argument("to", None), self.now_us // 1_000_000,
                                   default)
        except timerange.RangeError as exc:
            raise HTTPError(400, str(exc)) from exc

    async def page_range(self, fallback: str) -> timerange.TimeRange:
        """A page's range: the URL's (a preset is remembered in a cookie); without one,
        the remembered preset or the smallest holding the project's newest data
        (timerange.default_key). A chosen range is put back in the URL (app.js, with
        history.replaceState) and in the page's links, so the view can be shared."""
        if self.arg("range") is not None:
            tr = self.time_range(fallback)
            if tr.key in timerange.PRESETS:
                self.set_private_cookie(timerange.COOKIE, tr.key.encode(), expires_days=365)
            return tr
        remembered = self.get_cookie(timerange.COOKIE)
        newest = None
        if remembered not in timerange.PRESETS:
            assert self.project is not None, "load_project() comes first"
            newest = await self.run(newest_us, self.store, self.project.id)
        now_s = self.now_us // 1_000_000
        key = timerange.default_key(None if newest is None else newest // 1_000_000, now_s,
                                    remembered, fallback)
        tr = self.time_range(key)
        self.chosen_range = tr
        return tr

    def arg(self, name: str) -> str | None:
        """A query argument, None when absent or blank."""
        value = self.get_argument(name, None)
        return value.strip() if value and value.strip() else None

    def int_arg(self, name: str, default: int | None = None, minimum: int = 0,
                maximum: int = 1_000_000_000) -> int | None:
        raw = self.arg(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError as exc:
            raise HTTPError(400, f"'{name}' must be an integer") from exc
        if not minimum <= value <= maximum:
            raise HTTPError(400, f"'{name}' must be between {minimum} and {maximum}")
        return value

    def row_id(self, raw: str, what: str) -> int:
        """An id from the URL path (digits only, by the route): one that no 64-bit key
        can hold names nothing, so it is a 404 rather than an overflow in the driver."""
        digits = raw.lstrip("0") or "0"  # int() of a huge string is slow, and capped
        value = int(digits) if len(digits) <= 19 else INT64_MAX + 1
        if value > INT64_MAX:
            raise HTTPError(404, f"no {what} {raw}")
        return value

    def id_arg(self, name: str, what: str) -> int | None:
        """An optional id in the query: malformed is a 400, beyond 64 bits a 404."""
        raw = self.arg(name)
        if raw is None:
            return None
        if not raw.isascii() or not raw.isdigit():
            raise HTTPError(400, f"'{name}' must be a positive integer (an id)")
        return self.row_id(raw, what)

    def float_arg(self, name: str) -> float | None:
        raw = self.arg(name)
        if raw is None:
            return None
        try:
            value = float(raw)
        except ValueError as exc:
            raise HTTPError(400, f"'{name}' must be a number") from exc
        if not 0 <= value < 1e12:
            raise HTTPError(400, f"'{name}' must be a positive number")
        return value

    def write_json(self, document: Any) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json_text(document))

    def get_template_namespace(self) -> dict[str, Any]:
        namespace = super().get_template_namespace()
        namespace.update(fmt=fmt, json_encode=json_text, now_us=self.now_us, project=self.project,
                         projects=self.projects, purl=self.project_url, q=quote,
                         section="errors", here=self.here, kept_args=self.kept_args,
                         range_params=self.range_params(),
                         range_url=(self.here(dict(self.chosen_range.params()))
                                    if self.chosen_range else None),
                         range_labels=timerange.LABELS, logged_in=self.logged_in,
                         login=self.login, can=self.can,
                         log_url=self.log_url)
        return namespace

    def range_params(self) -> dict[str, str]:
        """The range the links of this page keep: the URL's, or the one chosen for it."""
        if self.chosen_range is not None:
            return self.chosen_range.params()
        return {k: v for k in ("range", "from", "to") if (v := self.get_argument(k, None))}

    def log_url(self, trace_id: str | None, service: str | None, time_ns: int) -> str:
        """The Logs page at one record, found by its time (and trace, or else service):
        a minute either side, the record at `time_ns` opened and pointed at."""
        return self.project_url("logs", trace_id=trace_id or None,
                                service=None if trace_id else service, at=time_ns,
                                **fmt.range_around_ns(time_ns))

    def kept_args(self, drop: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        """This request's query arguments (last value of each), less `drop`."""
        return [(k, self.get_argument(k)) for k in self.request.query_arguments
                if k not in drop]

    def here(self, changes: dict[str, str | None]) -> str:
        """This page's URL with some query arguments changed (None removes one)."""
        args = dict(self.kept_args())
        for key, value in changes.items():
            if value is None:
                args.pop(key, None)
            else:
                args[key] = value
        return self.request.path + ("?" + urlencode(args) if args else "")

    def project_url(self, section: str, project: str | None = None, **params: Any) -> str:
        """A dashboard URL in a project; None and missing parameters are left out."""
        name = project if project is not None else (self.project.name if self.project else "")
        query = urlencode({k: v for k, v in params.items() if v is not None})
        path = f"/projects/{quote(name, safe='')}/{section}"
        return path + ("?" + query if query else "")
