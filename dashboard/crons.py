"""The Crons page and its API (docs/crons.md): each monitor's schedule and state,
its timeline of check-ins with their durations, and its incidents; a monitor made
or reconfigured on the page (members and admins) or by `POST .../crons` with
Sentry's `monitor_config` shape. The state is the cron checker's
(storage/crons/checker.py); this module only reads it and writes configurations."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tornado.web import HTTPError

from dashboard.api import ApiHandler
from dashboard.base import DashboardHandler
from model import cron
from model.errors import InvalidInput
from storage.crons import monitors as monitors_mod
from storage.queries import crons as cq

# The form's fields, as monitor_config names them (the schedule's apart).
NUMBERS = ("checkin_margin", "max_runtime", "failure_issue_threshold", "recovery_threshold")


def _config(slug: Any, config: Any) -> tuple[str, cron.MonitorConfig]:
    """(slug, configuration) or a 400 naming every bad field."""
    problem = cron.slug_problem(slug)
    try:
        parsed = cron.parse_config(config)
    except InvalidInput as exc:
        problems = [f"{d['field']}: {d['error']}" for d in exc.details]
        raise HTTPError(400, "; ".join(([f"slug: {problem}"] if problem else []) + problems)
                        ) from exc
    if problem:
        raise HTTPError(400, f"slug: {problem}")
    return str(slug), parsed


class CronsPage(DashboardHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        found = await self.run(cq.monitors, self.store, project.id)
        counts = await self.run(cq.counts, self.store, project.id,
                                self.now_us - 86400 * 1_000_000)
        self.render("crons.html", monitors=found, counts=counts, section="crons",
                    units=cron.UNITS)

    async def post(self, project_name: str) -> None:
        """Make or reconfigure a monitor from the page's form."""
        project = await self.load_project(project_name)
        kind = self.get_argument("schedule_type", cron.CRONTAB)
        schedule: dict[str, Any] = {"type": kind, "value": self.get_argument("schedule", "")}
        if kind == cron.INTERVAL:
            schedule["unit"] = self.get_argument("unit", "")
        config: dict[str, Any] = {"schedule": schedule,
                                  "timezone": self.get_argument("timezone", "") or "UTC"}
        for name in NUMBERS:
            value = self.get_argument(name, "").strip()
            if value:
                config[name] = value
        slug, parsed = _config(self.get_argument("slug", "").strip(), config)
        await self.run(monitors_mod.save, self.store, project.id, slug, parsed, self.now_us)
        self.redirect(self.project_url(f"crons/{slug}"), status=303)


class CronPage(DashboardHandler):
    async def get(self, project_name: str, slug: str) -> None:
        project = await self.load_project(project_name)
        monitor, check_ins, incidents = await _monitor(self, project.id, slug)
        longest = max((c.duration_s or 0.0 for c in check_ins), default=0.0)
        self.render("cron.html", monitor=monitor, check_ins=check_ins, incidents=incidents,
                    longest=longest, section="crons", tr=self.time_range("24h"))


async def _monitor(handler: DashboardHandler, project_id: int, slug: str) -> tuple[
        cq.MonitorView, list[cq.CheckInView], list[cq.IncidentView]]:
    monitor = await handler.run(cq.monitor, handler.store, project_id, slug)
    if monitor is None:
        raise HTTPError(404, f"no cron monitor {slug!r} in this project")
    tr = handler.time_range("24h")
    check_ins = await handler.run(cq.check_ins, handler.store, project_id, slug,
                                  tr.start_us, tr.end_us)
    incidents = await handler.run(cq.incidents, handler.store, monitor.id)
    return monitor, check_ins, incidents


class CronsApi(ApiHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        found = await self.run(cq.monitors, self.store, project.id)
        self.write_json({"monitors": [asdict(m) for m in found]})

    async def post(self, project_name: str) -> None:
        """{"slug": ..., "monitor_config": {...}} as Sentry's SDKs send it."""
        project = await self.load_project(project_name)
        body = self.json_body('{"slug": "nightly", "monitor_config": {"schedule": '
                              '{"type": "crontab", "value": "0 3 * * *"}}}')
        if not isinstance(body, dict):
            raise HTTPError(400, "the body must be a JSON object with slug and monitor_config")
        slug, parsed = _config(body.get("slug"), body.get("monitor_config"))
        await self.run(monitors_mod.save, self.store, project.id, slug, parsed, self.now_us)
        monitor = await self.run(cq.monitor, self.store, project.id, slug)
        self.set_status(201)
        self.write_json(asdict(monitor) if monitor else {})


class CronApi(ApiHandler):
    """One monitor, its check-ins in the range (newest first) and its incidents."""

    async def get(self, project_name: str, slug: str) -> None:
        project = await self.load_project(project_name)
        monitor, check_ins, incidents = await _monitor(self, project.id, slug)
        self.write_json({"monitor": asdict(monitor),
                         "check_ins": [asdict(c) for c in check_ins],
                         "incidents": [asdict(i) for i in incidents]})


def routes(page: str, api: str, args: dict[str, Any]) -> list[Any]:
    return [(page + r"/crons", CronsPage, args),
            (page + r"/crons/([^/]+)", CronPage, args),
            (api + r"/crons", CronsApi, args),
            (api + r"/crons/([^/]+)", CronApi, args)]
