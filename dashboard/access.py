"""Who may use a dashboard or read-API handler, and do what: login, roles, private
cookies and cross-site request forgery. The handler of dashboard/base.py builds on it.

Tornado's own `xsrf_cookies` setting is application-wide and would refuse the
ingest endpoints' POSTs, so the check is made here instead: every state-changing
request that authenticates with the session cookie must carry the `_xsrf` token
(form field or X-XSRFToken header) derived from that session (dashboard/auth.py),
and the login form one derived from its own signed nonce cookie. Tornado's
double-submit check (a cookie equal to a field) is not used: an attacker able to
set one cookie on the victim's browser could choose both. A request with
`Authorization: Bearer <admin token or API token>` carries no ambient credential
a forged cross-site request could use, so it needs none.

Roles (none < viewer < member < admin) are checked here, server-side, before any
handler runs: a request of another method than GET/HEAD/OPTIONS needs the handler's
`write_role` ("member" unless the class says otherwise), so a new POST route is
closed to viewers by default; handlers may ask for more with require_role().
A team account's role may differ by project (storage/accounts/roles.py `role_in`:
the higher of its global role and its role in that project). Before the project is
known, a handler acting in one project lets through a login with `write_role` in
some project; `enter_project` (called by dashboard/scope.py `load_project`, which
every such handler calls before acting) checks it again in that project, and from
then on `role()`, `require_role()` and the templates' `can()` are the project's. A
project where the login's role is `none` is answered as one that does not exist
(404) and left out of lists. Handlers beyond one project (`across_projects`) use the
global role.

An API token (storage/accounts/tokens.py) is also held to its scopes and projects, by
one check, `authorize`: before the handler runs, the scope this handler needs for the
method (`read_scopes` for GET/HEAD/OPTIONS, `write_scope` otherwise; a handler acting
beyond one project, `across_projects`, needs a token over all projects), and again
for the project as soon as the handler loads it (dashboard/scope.py `load_project`).
A personal token is held to its account's role as well: it never does more than
either allows.
"""

from __future__ import annotations

import enum
import hmac
from urllib.parse import urlencode

from tornado.web import HTTPError, RequestHandler

from dashboard.auth import LOGIN_COOKIE, LOGIN_FORM_DAYS, SESSION_COOKIE
from dashboard.context import DashboardContext
from storage.accounts.roles import ROLES, at_least
from storage.accounts.sessions import Login
from storage.audit.log import ADMIN_TOKEN, SYSTEM, Actor

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class Pending(enum.Enum):
    PROJECT = "not known yet"  # authorize(): the scope alone, before the project


class AccessHandler(RequestHandler):
    api = False  # JSON errors and 401 instead of HTML and a redirect to the login
    # The member of an API error's JSON that holds its message (Sentry's API: "detail").
    error_key = "error"
    login_required = True
    # The least role that may send this handler anything but GET/HEAD/OPTIONS.
    write_role = "member"
    # The scopes an API token needs here (any one of read_scopes for GET/HEAD/OPTIONS,
    # write_scope for the rest; `admin` holds all): docs/dashboard.md#api-tokens.
    read_scopes: tuple[str, ...] = ("read",)
    write_scope = "project-admin"
    # Acting beyond one project (accounts, tokens): no token limited to projects.
    across_projects = False

    def initialize(self, dash: DashboardContext) -> None:
        self.dash = dash
        self.via_bearer = False
        self.logged_in = False
        self.session_token: str | None = None  # of a valid session cookie
        self.login: Login | None = None  # who is logged in
        self._login_nonce: str | None = None
        self.project_id: int | None = None  # the project acted in, once entered

    async def prepare(self) -> None:
        if not self.login_required:
            return
        self.logged_in = await self._authenticated()
        if not self.logged_in:
            if self.api or self.request.method not in SAFE_METHODS:
                raise HTTPError(401, "log in first: send 'Authorization: Bearer <admin token "
                                     "or API token>' (a working one: not revoked or "
                                     "expired) or the session cookie of /login")
            target = self.request.uri or "/"
            self.redirect("/login?" + urlencode({"next": target}))
            return
        if self.request.method not in SAFE_METHODS:
            if not self.via_bearer:
                self.check_xsrf_cookie()
            if self.across_projects:
                self.require_role(self.write_role)
            elif not at_least(self.highest_role(), self.write_role):
                raise HTTPError(403, f"this needs the {self.write_role} role")
        self.authorize(None if self.across_projects else Pending.PROJECT)

    # Who is acting, and what they may do: a team account (its email and role, also
    # through its personal token), the admin token's holder or a service token (an
    # admin by role, held by its scopes alone).
    ROLES = ROLES

    def actor(self) -> Actor:
        """Who the audit log (and a group's history, by its name) records for a change
        this request makes: the API token it came with (a personal one too: the token,
        not its account, so that a leaked token's changes can be told apart), else the
        account logged in, else the admin token's holder."""
        token = self.login.token if self.login else None
        if token is not None:
            return Actor.token(token.id, f"{token.email} (token {token.name})" if token.email
                               else f"service token {token.name}")
        if self.login is None:  # no change is made without a login (prepare)
            return SYSTEM
        if self.login.user_id is None:
            return ADMIN_TOKEN
        return Actor.user(self.login.user_id, self.login.email)

    def role(self) -> str:
        """The logged-in role: in the project entered (`enter_project`), else the
        global one; one of ROLES (none logged in: the least)."""
        if self.login is None:
            return "none"
        if self.project_id is not None:
            return self.login.role_in(self.project_id)
        return self.login.role

    def highest_role(self) -> str:
        return self.login.highest_role() if self.login else "none"

    def can(self, role: str, across: bool = False) -> bool:
        """Whether the login has at least `role` (in the project entered; `across`:
        its global role, for what is beyond projects). Templates hide what it may not
        do; the server refuses it regardless."""
        mine = (self.login.role if self.login else "none") if across else self.role()
        return at_least(mine, role)

    def require_role(self, role: str) -> None:
        """Refuse (403) a request whose login has less than `role` (in the project
        entered), server-side."""
        if not at_least(self.role(), role):
            where = "" if self.project_id is None else " in this project"
            raise HTTPError(403, f"this needs the {role} role{where}")

    def enter_project(self, project_id: int) -> None:
        """The project this request acts in, once it may (dashboard/scope.py
        `load_project`): 404 for one out of the login's (or its token's) reach, 403 for
        a change its role there does not allow."""
        if self.login is not None and self.login.role_in(project_id) == "none":
            raise HTTPError(404, "there is no such project for this account")
        self.authorize(project_id)
        self.project_id = project_id
        if self.request.method not in SAFE_METHODS:
            self.require_role(self.write_role)

    def sees(self, project_id: int) -> bool:
        """Whether this request may see the project (lists of projects): its token
        reaches it, and its account has a role there."""
        return self.token_reaches(project_id) and (
            self.login is None or self.login.role_in(project_id) != "none")

    def authorize(self, project_id: int | None | Pending = Pending.PROJECT) -> None:
        """The one check of an API token's reach (none for the admin token or a
        session), by storage/accounts/tokens.py's rule (`Token.allows`): the scope this
        request needs (by method), in the project it acts in: `project_id` once known,
        None for beyond any one project (only a token over all projects), PROJECT while
        not known yet (the scope alone). A project out of the token's reach is answered
        as one that does not exist (404): the token learns nothing of it."""
        token = self.login.token if self.login else None
        if token is None:
            return
        needed = (self.read_scopes if self.request.method in SAFE_METHODS
                  else (self.write_scope,))
        if not any(token.has_scope(scope) for scope in needed):
            raise HTTPError(403, f"this token's scopes ({', '.join(sorted(token.scopes))}) "
                                 f"do not allow this: it needs {' or '.join(needed)}")
        if isinstance(project_id, Pending) or any(
                token.allows(scope, project_id) for scope in needed):
            return
        if project_id is None:
            raise HTTPError(403, "this token is limited to some projects; this needs a "
                                 "token over all projects")
        raise HTTPError(404, "there is no such project for this token")

    def token_reaches(self, project_id: int) -> bool:
        """Whether this request may see the project (lists of projects)."""
        token = self.login.token if self.login else None
        return token is None or token.reaches(project_id)

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
