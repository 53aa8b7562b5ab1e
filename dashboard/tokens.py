"""The Tokens page: API tokens (storage/accounts/tokens.py) made, listed with their last
use, and revoked. Admins see and revoke every token and may make service tokens (of no
account); anyone else sees and makes only their own, personal ones (which act with
their account's role, so a scope above it gives nothing more).

A new token is shown in the page's answer once, never in a redirect or a log line.
The page is itself beyond any one project: a token may reach it only with the `admin`
scope over all projects (`across_projects`).
"""

from __future__ import annotations

from typing import Any

from tornado.web import HTTPError

from dashboard.base import DashboardHandler
from storage.accounts import tokens

DAY_US = 86_400 * 1_000_000
MAX_DAYS = 3650
KINDS = ("personal", "service")


class TokensHandler(DashboardHandler):
    write_role = "none"  # one's own tokens: any account; service tokens: admins (below)
    read_scopes = ("admin",)
    write_scope = "admin"
    across_projects = True

    def own_id(self) -> int | None:
        """The account whose tokens this login manages; None: all (an admin)."""
        if self.can("admin"):
            return None
        assert self.login is not None and self.login.user_id is not None
        return self.login.user_id

    async def show(self, **shown: Any) -> None:
        listed = await self.run(tokens.list_tokens, self.store, self.own_id())
        projects = await self.list_projects()
        shown.setdefault("secret", None)
        shown.setdefault("problem", None)
        self.render("tokens.html", tokens=listed, scopes=tokens.SCOPES, section="tokens",
                    names={p.id: p.name for p in projects}, kinds=self.kinds(),
                    done="Token revoked." if self.get_argument("done", "") == "revoked"
                    else None, **shown)

    def kinds(self) -> tuple[str, ...]:
        """What this login may make: personal tokens need an account; service tokens
        an admin."""
        has_account = self.login is not None and self.login.user_id is not None
        return tuple(k for k in KINDS if (k == "personal" and has_account)
                     or (k == "service" and self.can("admin")))


class TokensPage(TokensHandler):
    """GET /tokens; POST /tokens with `name`, `kind` (personal or service), `scope`
    (repeated), `project` (repeated names; none: all projects) and `expires_days`
    (blank: never): the new token, shown once."""

    async def get(self) -> None:
        await self.show()

    async def post(self) -> None:
        kind = self.get_body_argument("kind", "personal")
        if kind not in self.kinds():
            raise HTTPError(403 if kind in KINDS else 400,
                            f"you may make {' or '.join(self.kinds()) or 'no'} tokens"
                            if kind in KINDS else f"kind must be one of {', '.join(KINDS)}")
        days = self.int_arg("expires_days", None, 1, MAX_DAYS)
        names = [n for n in self.get_body_arguments("project") if n.strip()]
        assert self.login is not None
        try:
            projects = None if not names else await self.run(tokens.project_ids,
                                                             self.store, names)
            secret, token = await self.run(
                tokens.create, self.store, self.get_body_argument("name", ""),
                self.get_body_arguments("scope"), self.now_us, self.actor(),
                self.login.user_id if kind == "personal" else None, projects,
                None if days is None else self.now_us + days * DAY_US)
        except ValueError as exc:
            self.set_status(400)
            await self.show(problem=str(exc))
            return
        await self.show(secret=secret, created=token)


class RevokeToken(TokensHandler):
    """POST /tokens/{id}/revoke."""

    async def post(self, raw_id: str) -> None:
        revoked = await self.run(tokens.revoke, self.store, self.row_id(raw_id, "token"),
                                 self.now_us, self.actor(), self.own_id())
        if not revoked:
            raise HTTPError(404, f"no active token {raw_id} you may revoke")
        self.redirect("/tokens?done=revoked", status=303)


def routes(args: dict[str, Any]) -> list[Any]:
    return [
        (r"/tokens", TokensPage, args),
        (r"/tokens/([0-9]+)/revoke", RevokeToken, args),
    ]
