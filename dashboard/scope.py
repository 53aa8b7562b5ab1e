"""What a page is about: its project and its time range, read from the URL (a range
also from a cookie), with the store's blocking queries run off the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from tornado.web import HTTPError

from dashboard import timerange
from dashboard.access import AccessHandler
from dashboard.context import DashboardContext
from dashboard.queryargs import QueryArgsHandler
from model.timeutil import now_us
from storage.queries import projects as pq
from storage.queries.newest import newest_us

T = TypeVar("T")


class ScopeHandler(AccessHandler, QueryArgsHandler):
    def initialize(self, dash: DashboardContext) -> None:
        super().initialize(dash)
        self.store = dash.store
        self.now_us = now_us()
        self.project: pq.Project | None = None
        self.projects: list[pq.Project] = []
        self.chosen_range: timerange.TimeRange | None = None  # see page_range()

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A blocking query, off the event loop that also serves ingest."""
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def list_projects(self) -> list[pq.Project]:
        """The projects this request may see (an API token: its own; an account: those
        it has a role in), for menus and
        lists; kept as `self.projects`."""
        self.projects = [p for p in await self.run(pq.list_projects, self.store)
                         if self.sees(p.id)]
        return self.projects

    async def load_project(self, name: str) -> pq.Project:
        """The project a route names, once this request may act in it (enter_project:
        the token's reach, the account's role there): a 404 when there is none, or none
        this request's token or account reaches."""
        project = next((p for p in await self.list_projects() if p.name == name), None)
        if project is None:
            raise HTTPError(404, f"there is no project named {name!r}")
        self.enter_project(project.id)
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

    def range_params(self) -> dict[str, str]:
        """The range the links of this page keep: the URL's, or the one chosen for it."""
        if self.chosen_range is not None:
            return self.chosen_range.params()
        return {k: v for k in ("range", "from", "to") if (v := self.get_argument(k, None))}
