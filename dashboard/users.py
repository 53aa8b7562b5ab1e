"""The Users page (admins: add accounts, change roles, across all projects or in one,
disable, enable, delete) and
the Account page (anyone logged in with an account: their password; their API tokens
are on the Tokens page, dashboard/tokens.py).

A password typed here goes only to storage/accounts/users.py, which keeps its Argon2id hash.
Every POST goes through DashboardHandler.prepare, which checks the anti-forgery
token and the handler's `write_role`; an API token needs the `admin` scope over all
projects here.
"""

from __future__ import annotations

from typing import Any

from tornado.web import HTTPError

from dashboard.auth import SESSION_COOKIE
from dashboard.base import DashboardHandler
from storage.accounts import project_roles, users
from storage.accounts.roles import PROJECT_ROLES
from storage.queries import projects as pq

DONE = {
    "created": "Account added.", "role": "Role changed.", "disabled": "Account disabled.",
    "enabled": "Account enabled.", "deleted": "Account deleted.",
    "password": "Password changed; your other sessions ended.",
    "project-role": "Project role changed.",
}
ACTIONS = ("create", "set-role", "set-project-role", "disable", "enable", "delete")


class UsersPage(DashboardHandler):
    """GET /users; POST /users with `action` one of ACTIONS and `email`."""

    write_role = "admin"
    read_scopes = ("admin",)
    write_scope = "admin"
    across_projects = True

    async def get(self) -> None:
        self.require_role("admin")
        await self.show()

    async def show(self, problem: str | None = None) -> None:
        accounts = await self.run(users.list_users, self.store)
        in_projects = await self.run(project_roles.all_named, self.store)
        projects = await self.run(pq.list_projects, self.store)
        self.render("users.html", accounts=accounts, roles=users.ROLES, problem=problem,
                    in_projects=in_projects, projects=[p.name for p in projects],
                    project_roles=PROJECT_ROLES,
                    done=None if problem else DONE.get(self.get_argument("done", "")),
                    section="users")

    async def post(self) -> None:
        action = self.get_body_argument("action", "")
        email = self.get_body_argument("email", "").strip()
        if action not in ACTIONS:
            raise HTTPError(400, f"action must be one of {', '.join(ACTIONS)}")
        if not email:
            raise HTTPError(400, "'email' is missing")
        if self.login and self.login.email == email.lower() and action != "create":
            raise HTTPError(400, "you cannot change your own account here (an admin would "
                                 "lock themself out); ask another admin")
        try:
            found = await self.run(self.change, action, email)
        except ValueError as exc:
            self.set_status(400)
            await self.show(str(exc))
            return
        if not found:
            raise HTTPError(404, f"no account for {email}")
        code = {"create": "created", "set-role": "role",
                "set-project-role": "project-role"}.get(action, f"{action}d")
        self.redirect(f"/users?done={code}", status=303)

    def change(self, action: str, email: str) -> bool:
        actor = self.actor()
        if action == "create":
            users.create(self.store, email, self.get_body_argument("password", "", strip=False),
                         self.get_body_argument("role", ""), self.now_us, actor)
            return True
        if action == "set-role":
            return users.set_role(self.store, email, self.get_body_argument("role", ""), actor)
        if action == "set-project-role":
            return project_roles.set_role(self.store, email,
                                          self.get_body_argument("project", ""),
                                          self.get_body_argument("role", ""), actor)
        if action == "disable":
            return users.disable(self.store, email, self.now_us, actor)
        if action == "enable":
            return users.enable(self.store, email, actor)
        return users.delete_user(self.store, email, actor)


class AccountHandler(DashboardHandler):
    write_role = "none"  # one's own password: any account, even one of no global role
    read_scopes = ("admin",)
    write_scope = "admin"
    across_projects = True

    def user_id(self) -> int:
        if self.login is None or self.login.user_id is None:
            raise HTTPError(400, "the admin token has no account: log in with an email and "
                                 "password to change your password")
        return self.login.user_id

    async def show(self, **shown: Any) -> None:
        shown.setdefault("problem", None)
        self.render("account.html", section="account",
                    done=DONE.get(self.get_argument("done", "")), **shown)


class AccountPage(AccountHandler):
    """GET /account."""

    async def get(self) -> None:
        await self.show()


class ChangePassword(AccountHandler):
    """POST /account/password, fields `current` and `new`: ends every session of the
    account (storage/users.set_password), then logs this browser in again."""

    async def post(self) -> None:
        user_id = self.user_id()
        assert self.login is not None
        current = self.get_body_argument("current", "", strip=False)
        if await self.run(users.verify, self.store, self.login.email, current) is None:
            self.set_status(400)
            await self.show(problem="The current password is not right.")
            return
        try:
            await self.run(users.set_password, self.store, self.login.email,
                           self.get_body_argument("new", "", strip=False), self.actor())
        except ValueError as exc:
            self.set_status(400)
            await self.show(problem=str(exc))
            return
        self.set_private_cookie(SESSION_COOKIE, await self.dash.auth.new_session(user_id),
                                expires_days=self.dash.auth.session_days)
        self.redirect("/account?done=password", status=303)


def routes(args: dict[str, Any]) -> list[Any]:
    return [
        (r"/users", UsersPage, args),
        (r"/account", AccountPage, args),
        (r"/account/password", ChangePassword, args),
    ]
