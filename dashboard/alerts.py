"""A project's alert settings page: its destinations and rules (add, remove, "Send a
test alert") and its latest alerts with how each delivery went.

Like every dashboard page it needs the admin's login, and every POST the session's
anti-forgery token (dashboard/access.py). The logic is the alerts extension's
(extensions/alerts/admin.py): credentials are sealed before they are
stored and only ever shown redacted. A refused form is shown again with what was
wrong and the fields that hold no credential; a URL, secret or password is never
written back into the page, a redirect or the log (Tornado's access log has the
path, not the form).
"""

from __future__ import annotations

from typing import Any

from tornado.web import HTTPError

from dashboard.base import DashboardHandler
from extensions.alerts import destinations as dest
from extensions.alerts import forms
from extensions.alerts.admin import AlertsAdmin
from model.errors import ConfigError
from storage.alerts import outbox as outbox

RECENT = 50
# What a redirect after a change may say: fixed texts, chosen by a code.
DONE = {
    "destination-added": "Destination added.",
    "destination-removed": "Destination removed.",
    "rule-added": "Rule added.",
    "rule-removed": "Rule removed.",
    "test-sent": "Test alert recorded: it is delivered within a few seconds (see below).",
}
# Form fields shown again after a refusal; credentials never are.
KEPT_FIELDS = ("name", "type", "host", "port", "security", "user", "from", "to", "on", "env",
               "service", "count", "minutes", "threshold", "p95_ms")


def shown_destination(name: str) -> str:
    """A delivery's destination as the page names it: a project's own is stored as
    `<project id>/<name>` (admin.delivery_name)."""
    return name.partition("/")[2] or name


class AlertsHandler(DashboardHandler):
    """What the page and its forms share."""

    write_role = "admin"

    @property
    def admin(self) -> AlertsAdmin:
        admin = self.dash.alerts
        if admin is None:
            raise HTTPError(409, "the alerts extension is disabled (alerts.enabled: false)")
        return admin

    async def show(self, project_name: str, problem: str | None = None,
                   form: dict[str, str] | None = None) -> None:
        project = await self.load_project(project_name)
        admin = self.dash.alerts
        overview = None if admin is None else await self.run(admin.overview, project.id)
        recent = await self.run(outbox.recent, self.store, project.id, RECENT)
        done = DONE.get(self.get_argument("done", ""))
        self.render("alerts.html", overview=overview, recent=recent, problem=problem,
                    done=None if problem else done, form=form or {}, section="alerts",
                    kinds=forms.RULE_KINDS, conditions=forms.CONDITIONS,
                    types=tuple(forms.DESTINATION_FIELDS), security=("starttls", "tls", "none"),
                    shown_destination=shown_destination, secret_keys=dest.SECRET_KEYS)

    def form(self) -> dict[str, str]:
        # Not stripped here (Tornado's default): a secret's spaces may be part of it.
        return {k: self.get_body_argument(k, "", strip=False)
                for k in self.request.body_arguments}

    async def refused(self, project_name: str, exc: ConfigError) -> None:
        kept = {k: v for k, v in self.form().items() if k in KEPT_FIELDS}
        self.set_status(400)
        await self.show(project_name, str(exc), kept)

    def done(self, code: str) -> None:
        self.redirect(self.project_url("alerts", done=code), status=303)


class AlertsPage(AlertsHandler):
    """GET /projects/{name}/alerts; its forms POST to the handlers below."""

    async def get(self, project_name: str) -> None:
        await self.show(project_name)


class AddDestination(AlertsHandler):
    async def post(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        try:
            await self.run(self.admin.add_destination, project.id, self.form(), self.actor())
        except ConfigError as exc:
            await self.refused(project_name, exc)
            return
        self.done("destination-added")


class RemoveDestination(AlertsHandler):
    async def post(self, project_name: str, raw_id: str) -> None:
        project = await self.load_project(project_name)
        try:
            removed = await self.run(self.admin.remove_destination, project.id,
                                     self.row_id(raw_id, "destination"), self.actor())
        except ConfigError as exc:
            await self.refused(project_name, exc)
            return
        if not removed:
            raise HTTPError(404, f"no destination {raw_id} in this project")
        self.done("destination-removed")


class AddRule(AlertsHandler):
    async def post(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        names = [n.strip() for n in self.get_body_arguments("destinations") if n.strip()]
        try:
            await self.run(self.admin.add_rule, project.id, self.form(), names, self.actor())
        except ConfigError as exc:
            await self.refused(project_name, exc)
            return
        self.done("rule-added")


class RemoveRule(AlertsHandler):
    async def post(self, project_name: str, raw_id: str) -> None:
        project = await self.load_project(project_name)
        removed = await self.run(self.admin.remove_rule, project.id,
                                 self.row_id(raw_id, "rule"), self.actor())
        if not removed:
            raise HTTPError(404, f"no rule {raw_id} in this project")
        self.done("rule-removed")


class SendTest(AlertsHandler):
    async def post(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        try:
            await self.run(self.admin.send_test, project.id,
                           self.get_body_argument("destination", ""))
        except ConfigError as exc:
            await self.refused(project_name, exc)
            return
        self.done("test-sent")


def routes(prefix: str, args: dict[str, Any]) -> list[Any]:
    """The page's routes under /projects/{name}."""
    base = prefix + r"/alerts"
    return [
        (base, AlertsPage, args),
        (base + r"/destinations", AddDestination, args),
        (base + r"/destinations/([0-9]+)/remove", RemoveDestination, args),
        (base + r"/rules", AddRule, args),
        (base + r"/rules/([0-9]+)/remove", RemoveRule, args),
        (base + r"/test", SendTest, args),
    ]
