"""A project's Stats page and its read API: what the project sent, hour by hour, and
what became of it (accepted, filtered, rate limited, over quota, shed, invalid,
dropped; and what its SDKs dropped before sending, from their client reports), and
its limits and spike protection, which admins set here (docs/limits.md).

The limits set here are stored per project (storage/limits/settings.py) and laid
over the configuration's (`auth.limits`) category by category, on every collector
within `auth.limits.refresh_seconds`.
"""

from __future__ import annotations

import math
import time
from typing import Any

from tornado.web import HTTPError

from dashboard.api import ApiHandler
from dashboard.base import DashboardHandler
from model import limits as lim
from storage.limits import settings
from storage.limits import usage as usage_store

MAX_HOURS = 24 * 92
SHOWN_OUTCOMES = tuple(o for o in lim.OUTCOMES if o != lim.CLIENT_DISCARDED)
DONE = {"saved": "Limits saved: every collector applies them within a few seconds."}
MAX_MULTIPLE = 1000.0


def _window(handler: DashboardHandler) -> tuple[int, int, int]:
    hours = handler.int_arg("hours", 24, 1, MAX_HOURS) or 24
    now_hour = int(time.time()) // 3600 * 3600
    return hours, now_hour - (hours - 1) * 3600, now_hour


def _multiple(raw: Any) -> float:
    if raw in (None, ""):
        return 0.0
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"spike protection's multiple must be a number, got {raw!r}") from None
    if not math.isfinite(value) or value < 0 or (0 < value < 1.5) or value > MAX_MULTIPLE:
        raise ValueError("spike protection's multiple must be 0 (off) or between 1.5 and "
                         f"{MAX_MULTIPLE:g}")
    return value


class StatsHandler(DashboardHandler):
    """What the page and its form share."""

    async def show(self, project_name: str, problem: str | None = None) -> None:
        project = await self.load_project(project_name)
        hours, since, until = _window(self)
        usage = await self.run(usage_store.project_usage, self.store, project.id, since, until)
        limits = await self.run(settings.project_limits, self.store, project.id)
        spike = (await self.run(settings.spike_settings, self.store)).get(project.id)
        self.render("stats.html", usage=usage, limits=limits, spike=spike, hours=hours,
                    categories=lim.CATEGORIES, outcomes=SHOWN_OUTCOMES, periods=lim.PERIODS,
                    problem=problem, done=None if problem else DONE.get(
                        self.get_argument("done", "")), section="stats")


class StatsPage(StatsHandler):
    async def get(self, project_name: str) -> None:
        await self.show(project_name)


class LimitsForm(StatsHandler):
    """POST the Limits form: every category's rate, burst, quota and period (an empty
    rate and quota: the configuration's limit applies), and spike protection."""

    write_role = "admin"

    async def post(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        try:
            limits: dict[str, lim.Limit] = {}
            for category in lim.CATEGORIES:
                raw = {key: self.get_body_argument(f"{category}_{key}", "").strip()
                       for key in ("rate", "burst", "quota", "period")}
                if not raw["rate"] and not raw["quota"]:
                    continue
                limits[category] = lim.parse_limit(category, {
                    "rate": _number(raw["rate"], f"{category} rate"),
                    "burst": _number(raw["burst"], f"{category} burst"),
                    "quota": int(_number(raw["quota"], f"{category} quota")),
                    "period": raw["period"] or "day"})
            multiple = _multiple(self.get_body_argument("spike_multiple", "").strip())
        except ValueError as exc:
            self.set_status(400)
            await self.show(project_name, str(exc))
            return
        await self.run(settings.set_limits, self.store, project.id, limits, self.actor())
        await self.run(settings.set_spike_multiple, self.store, project.id, multiple)
        self.redirect(self.project_url("stats", project.name, done="saved"), status=303)


def _number(raw: str, what: str) -> float:
    if not raw:
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{what} must be a number, got {raw!r}") from None
    if not math.isfinite(value) or value < 0 or value > 1e15:
        raise ValueError(f"{what} must be a number >= 0")
    return value


class UsageApi(ApiHandler):
    """GET ?hours=24 (1 to 2208): the project's usage, per category and outcome, per
    hour, and its SDKs' client reports."""

    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        hours, since, until = _window(self)
        usage = await self.run(usage_store.project_usage, self.store, project.id, since, until)
        self.write_json({"project": project.name, "hours": hours, "since": since,
                         **usage.as_json()})


class LimitsApi(ApiHandler):
    """GET: the limits set for the project here (over the configuration's), and its
    spike protection. POST (admins): `{"limits": {category: {rate, burst, quota,
    period}}, "spike_protection": multiple}`, replacing both."""

    write_role = "admin"

    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        limits = await self.run(settings.project_limits, self.store, project.id)
        spike = (await self.run(settings.spike_settings, self.store)).get(project.id)
        self.write_json({"project": project.name,
                         "limits": {c: limit.as_json() for c, limit in limits.items()},
                         "spike_protection": None if spike is None else {
                             "multiple": spike[0], "active": spike[1], "cap": spike[2]}})

    async def post(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        example = '{"limits": {"error": {"rate": 50, "burst": 100}}, "spike_protection": 10}'
        body = self.json_body(example)
        if not isinstance(body, dict):
            raise HTTPError(400, f"the body must be a JSON object: {example}")
        unknown = sorted(set(body) - {"limits", "spike_protection"})
        if unknown:
            raise HTTPError(400, f"unknown key {unknown[0]!r}: {example}")
        try:
            limits = lim.parse_limits("limits", body.get("limits"))
            multiple = _multiple(body.get("spike_protection"))
        except ValueError as exc:
            raise HTTPError(400, str(exc)) from exc
        await self.run(settings.set_limits, self.store, project.id, limits, self.actor())
        await self.run(settings.set_spike_multiple, self.store, project.id, multiple)
        await self.get(project_name)


def routes(page: str, api: str, args: dict[str, Any]) -> list[Any]:
    return [(page + r"/stats", StatsPage, args),
            (page + r"/stats/limits", LimitsForm, args),
            (api + r"/usage", UsageApi, args),
            (api + r"/limits", LimitsApi, args)]
