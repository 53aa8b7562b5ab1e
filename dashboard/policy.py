"""A project's policy on the dashboard and the read API: its scrubbing settings and
inbound filters (docs/scrubbing.md) and its performance detectors' thresholds
(docs/apm.md), as set here over the configuration's.

- GET /api/v1/projects/{name}/policy: what was set here (`stored`, null when nothing),
  and the policy in force (`effective`: the configuration's with it laid over).
- POST the same path, `{"scrubbing": {...}, "filters": {...}, "detectors": {...}}`
  (admin, each part optional): checked by model/policy.py's readers (a 400 names the
  bad key), stored in `project_policies`; every part null removes it. The collectors sharing the
  database apply it within `policy.refresh_seconds`.
- GET /projects/{name}/policy: the same as a page, with a form for each (admin).
"""

from __future__ import annotations

import json
from typing import Any

from tornado.web import HTTPError

from dashboard.base import DashboardHandler
from model.policy import DEFAULT, PARTS, layered, policy_mapping
from storage import policies
from storage.policies import Parts

EXAMPLE = ('{"scrubbing": {"emails": true, "rules": [{"keys": ["user.id"], "action": "hash"}]}, '
           '"filters": {"web_crawlers": true, "releases": ["*-dev"]}, '
           '"detectors": {"n_plus_one": {"min_spans": 10}}}')


def checked(body: Any) -> Parts | None:
    """The parts of a body, checked; None to remove the stored policy."""
    if not isinstance(body, dict) or not set(body) <= set(PARTS):
        raise HTTPError(400, f"the body must be an object with {', '.join(PARTS)}: {EXAMPLE}")
    if all(body.get(part) is None for part in PARTS):
        return None
    try:
        layered(DEFAULT, body, "policy")
    except ValueError as exc:
        raise HTTPError(400, str(exc).removeprefix("policy.")) from exc
    return {part: dict(body.get(part) or {}) for part in PARTS}


class PolicyHandler(DashboardHandler):
    write_role = "admin"  # it decides what is stored of every signal

    async def stored(self, project_id: int) -> dict[str, Any] | None:
        rows = await self.run(policies.all_policies, self.store)
        return rows.get(project_id)

    def effective(self, project_id: int) -> dict[str, Any] | None:
        source = self.dash.policies
        if source is None:
            return None
        return policy_mapping(source.policy_for(project_id))

    async def save(self, project_id: int, body: Any) -> None:
        given = checked(body)
        if given is None:
            await self.run(policies.clear_policy, self.store, project_id, self.actor())
        else:
            await self.run(policies.set_policy, self.store, project_id, given, self.actor())


class PolicyApi(PolicyHandler):
    api = True

    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        self.write_json({"project": project.name, "stored": await self.stored(project.id),
                         "effective": self.effective(project.id)})

    async def post(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        await self.save(project.id, self.json_body(EXAMPLE))
        self.write_json({"project": project.name, "stored": await self.stored(project.id)})


class PolicyPage(PolicyHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        self.show(await self.stored(project.id), None, project.id)

    def show(self, stored: dict[str, Any] | None, problem: str | None, project_id: int,
             text: str | None = None) -> None:
        self.render("policy.html", section="policy", problem=problem,
                    text=text if text is not None else json.dumps(
                        stored or {part: {} for part in PARTS}, indent=2),
                    effective=json.dumps(self.effective(project_id), indent=2))

    async def post(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        text = self.get_argument("policy", "")
        try:
            await self.save(project.id, json.loads(text or "null"))
        except (ValueError, RecursionError, HTTPError) as exc:
            message = exc.log_message if isinstance(exc, HTTPError) else \
                f"the policy must be JSON: {exc}"
            self.set_status(400)
            self.show(None, message, project.id, text)
            return
        self.redirect(f"/projects/{project_name}/policy", status=303)
