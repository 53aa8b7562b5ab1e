"""The Audit page (GET /audit) and its read-API twin (GET /api/v1/audit): the audit
log (storage/audit/), newest first, filtered by who (`actor`, a name as shown),
what (`action`, one action or a family such as `group`) and `project` (a name), a
page at a time (`page`; the API also takes `limit`). Admins only, for reading too:
the log names accounts and what they did. Everything it shows came from a client
at some point (an email, a project name, a rule's filters) and goes through the
template's escaping, the before and after as JSON text."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tornado.web import HTTPError

from dashboard.base import DashboardHandler, json_text
from storage.audit.actions import ACTIONS, FAMILIES
from storage.audit.log import ACTOR_KINDS
from storage.queries import audit as aq
from storage.queries import projects as pq

PAGE_SIZE = 50
MAX_LIMIT = 500
MAX_PAGE = 100_000
MAX_ACTOR = 320  # the length of an actor's name (storage/schema/audit.py)


class AuditHandler(DashboardHandler):
    """What the page and the API share: the admin check and the filter."""

    # Every project's changes: an API token needs the admin scope over all projects.
    read_scopes = ("admin",)
    across_projects = True

    async def prepare(self) -> None:
        await super().prepare()
        if self.logged_in:
            self.require_role("admin")

    async def read(self, limit: int) -> tuple[aq.Filter, int, aq.Page]:
        """(the filter, the page number, its entries), each argument checked."""
        actor = self.arg("actor")
        if actor is not None and len(actor) > MAX_ACTOR:
            raise HTTPError(400, f"'actor' must be at most {MAX_ACTOR} characters")
        action = self.arg("action")
        if action is not None and action not in ACTIONS and action not in FAMILIES:
            raise HTTPError(400, "'action' must be an audit action or family: "
                                 f"{', '.join((*FAMILIES, *ACTIONS))}")
        project_id = None
        project = self.arg("project")
        self.projects = await self.run(pq.list_projects, self.store)
        if project is not None:
            found = next((p for p in self.projects if p.name == project), None)
            if found is None:
                raise HTTPError(400, f"'project': there is no project named {project!r}")
            project_id = found.id
        page = self.int_arg("page", 1, 1, MAX_PAGE) or 1
        match = aq.Filter(actor, action, project_id)
        entries = await self.run(aq.entries, self.store, match, limit, (page - 1) * limit)
        return match, page, entries


class AuditPage(AuditHandler):
    async def get(self) -> None:
        match, page, found = await self.read(PAGE_SIZE)
        self.render("audit.html", match=match, page=page, found=found, page_size=PAGE_SIZE,
                    actions=ACTIONS, families=FAMILIES, actor_kinds=ACTOR_KINDS,
                    chosen_project=self.arg("project"), json_text=json_text,
                    section="audit")


class AuditApi(AuditHandler):
    """{"entries": [...], "page": n, "next_page": n + 1 or null}."""

    api = True

    async def get(self) -> None:
        limit = self.int_arg("limit", PAGE_SIZE, 1, MAX_LIMIT) or PAGE_SIZE
        _, page, found = await self.read(limit)
        self.write_json({"entries": [asdict(e) for e in found.entries], "page": page,
                         "next_page": page + 1 if found.more else None})


def routes(args: dict[str, Any]) -> list[Any]:
    return [(r"/audit", AuditPage, args), (r"/api/v1/audit", AuditApi, args)]
