"""The error list's bulk form as JSON: POST /api/v1/projects/{project}/error-groups/
bulk-status with {"groups": [ids], "status": …} and, as for one group, "next_release"
or "snooze". One transaction; every change recorded with who made it."""

from __future__ import annotations

from typing import Any

from tornado.web import HTTPError

from dashboard.api import ApiHandler, status_change
from storage.groups import status as group_status

ID_MAX = 2**63 - 1


def group_ids(raw: Any) -> list[int]:
    """`groups`: 1 to MAX_BULK ids. Ids naming no group of the project (another
    project's, unknown) are left out, as the form's are."""
    if not isinstance(raw, list) or not raw:
        raise HTTPError(400, "groups must be a list of error group ids (at least one)")
    if len(raw) > group_status.MAX_BULK:
        raise HTTPError(400, f"at most {group_status.MAX_BULK} groups at once")
    if not all(type(value) is int and 0 < value <= ID_MAX for value in raw):
        raise HTTPError(400, "each of groups must be an error group's id (a positive integer)")
    return list(raw)


class ErrorGroupsBulkStatusApi(ApiHandler):
    """Answers {"changed": n}: the groups whose status changed (those already in it do
    not, unless snoozed)."""

    async def post(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        change = status_change(self)
        ids = group_ids(change.body.get("groups"))
        self.require_role("member")
        changed = await self.run(group_status.set_statuses, self.store, project.id, ids,
                                 change.status, self.actor(), None, change.next_release,
                                 change.snooze)
        self.write_json({"changed": changed})
