"""Merging error groups, and undoing it (storage/groups/merge.py), from the error list's bulk
form, the group page's Unmerge buttons and the read/write API.

The bulk form's Merge merges the ticked groups into the one with the most events
(counted with what is merged into each already; a tie goes to the first ticked).
The API names its target: POST {"into": id, "groups": [ids]}. Members and admins
may merge (the handlers' write_role, checked before they run); every merge and
unmerge is recorded in the groups' history with who made it.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tornado.web import HTTPError

from dashboard.base import DashboardHandler
from dashboard.pages import _safe_next
from storage.audit.log import Actor
from storage.groups import merge
from storage.groups.status import MAX_BULK
from storage.queries import errors as eq
from storage.store import Store

ID_DIGITS = 19


def merge_into_largest(store: Store, project_id: int, group_ids: list[int],
                       actor: Actor) -> int:
    """Merge the groups into the one with the most events (a tie: the first of
    `group_ids`); returns its id. Unknown ids are left to merge() to name."""
    found = {g.id: g for g in eq.groups_by_id(store, project_id, group_ids)}
    order = {gid: i for i, gid in reversed(list(enumerate(group_ids)))}
    known = [g for g in found.values() if g.merged_into is None]
    into = max(known, key=lambda g: (g.count, -order[g.id])).id if known else group_ids[0]
    merge.merge(store, project_id, into, group_ids, actor)
    return into


def _refused(exc: merge.MergeError) -> HTTPError:
    return HTTPError(404 if exc.missing else 400, str(exc))


def _ids(raw: list[str]) -> list[int]:
    if len(raw) > MAX_BULK:
        raise HTTPError(400, f"at most {MAX_BULK} groups at once")
    if not all(value.isascii() and value.isdigit() and len(value) <= ID_DIGITS
               for value in raw):
        raise HTTPError(400, "each 'group' must be an error group's id (digits)")
    return [int(value) for value in raw]


class MergePage(DashboardHandler):
    """The error list's bulk Merge: the ticked groups' ids (`group`, repeated); then
    back to the list (`back`, a path on this site)."""

    async def post(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        ids = _ids(self.get_arguments("group"))
        if len(set(ids)) < 2:
            raise HTTPError(400, "tick at least two error groups to merge")
        self.require_role("member")
        try:
            await self.run(merge_into_largest, self.store, project.id, ids, self.actor())
        except merge.MergeError as exc:
            raise _refused(exc) from exc
        prefix = self.project_url("errors")
        target = _safe_next(self.get_argument("back", None))
        self.redirect(target if target.startswith(prefix) else prefix, status=303)


class UnmergePage(DashboardHandler):
    """A merged group's Unmerge button: then back to the group it was merged into."""

    async def post(self, project_name: str, group_id: str) -> None:
        _, _, into = await _unmerge(self, project_name, group_id)
        self.redirect(self.project_url(f"errors/{into}"), status=303)


async def _unmerge(handler: DashboardHandler, project_name: str, group_id: str
                   ) -> tuple[Any, int, int]:
    """The page's and the API's unmerge: (project, group id, the id it was merged
    into); 404 for no such group of the project, 400 for one that is not merged."""
    group = handler.row_id(group_id, "error group")
    project = await handler.load_project(project_name)
    handler.require_role("member")
    try:
        into = await handler.run(merge.unmerge, handler.store, project.id, group,
                                 handler.actor())
    except merge.MergeError as exc:
        raise _refused(exc) from exc
    if into is None:
        raise HTTPError(404, f"no error group {group_id} in project {project.name!r}")
    return project, group, into


def _is_id(value: Any) -> bool:
    return type(value) is int and value > 0


class MergeApi(DashboardHandler):
    """POST {"into": id, "groups": [ids]}: merge the groups into `into` (which may be
    among them). Answers the merged group and the ids merged into it."""

    api = True

    async def post(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        body = self.json_body('{"into": 12, "groups": [14, 15]}')
        if not isinstance(body, dict) or set(body) - {"into", "groups"}:
            raise HTTPError(400, 'the body must be {"into": id, "groups": [ids]}')
        into, groups = body.get("into"), body.get("groups")
        if not _is_id(into):
            raise HTTPError(400, "into must be an error group's id (a positive integer)")
        if not isinstance(groups, list) or not all(_is_id(g) for g in groups):
            raise HTTPError(400, "groups must be a list of error group ids")
        if len(groups) > MAX_BULK:
            raise HTTPError(400, f"at most {MAX_BULK} groups at once")
        self.require_role("member")
        try:
            merged = await self.run(merge.merge, self.store, project.id, into, groups,
                                    self.actor())
        except merge.MergeError as exc:
            raise _refused(exc) from exc
        group = await self.run(eq.get_group, self.store, project.id, into)
        self.write_json({"group": asdict(group) if group else None, "merged": merged})


class UnmergeApi(DashboardHandler):
    """POST: undo a group's merge. Answers the group, with its own counts again, and
    the id of the group it had been merged into."""

    api = True

    async def post(self, project_name: str, group_id: str) -> None:
        project, group, into = await _unmerge(self, project_name, group_id)
        updated = await self.run(eq.get_group, self.store, project.id, group)
        self.write_json({"group": asdict(updated) if updated else None, "unmerged_from": into})


def routes(project: str, api: str, args: dict[str, Any]) -> list[Any]:
    return [(project + r"/errors/merge", MergePage, args),
            (project + r"/errors/([0-9]+)/unmerge", UnmergePage, args),
            (api + r"/error-groups/merge", MergeApi, args),
            (api + r"/error-groups/([0-9]+)/unmerge", UnmergeApi, args)]
