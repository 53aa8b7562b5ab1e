"""Release health on the dashboard: the Releases page (every release with sessions
in the range, per environment), a release's page, and their read-API twins
(docs/release-health.md, docs/api.md). Figures from storage/queries/releases.py."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from tornado.web import HTTPError

from dashboard.api import MAX_LIMIT, ApiHandler
from dashboard.base import DashboardHandler
from dashboard.timerange import TimeRange
from storage.artifacts import lookup as artifacts
from storage.artifacts import releases as made
from storage.queries import deploys as dq
from storage.queries import errors as eq
from storage.queries import releases as rq
from storage.store import Store

MAX_RELEASE = 200  # characters: the column's length


@dataclass(frozen=True)
class ReleasesView:
    start_s: int
    end_s: int
    environment: str | None  # the filter; None: every environment
    releases: list[rq.Health]  # per release and environment, the most sessions first


def releases_view(store: Store, project_id: int, tr: TimeRange, environment: str | None,
                  now_us: int) -> ReleasesView:
    return ReleasesView(tr.start_s, tr.end_s, environment, rq.health(
        store, project_id, tr.start_s, tr.end_s, now_us // 1_000_000,
        environment=environment))


@dataclass(frozen=True)
class ReleaseView:
    release: str
    start_s: int
    end_s: int
    total: rq.Health | None  # every environment together; None: no session in range
    environments: list[rq.Health]
    series: list[rq.Point]  # sessions and crashes per step, every environment
    step_s: int
    deploys: list[dq.Deploy] = field(default_factory=list)  # of this version, in range
    new_groups: list[eq.Group] = field(default_factory=list)  # first seen in it
    # When `sentry-cli releases new` and `finalize` made it (None: not by them), and the
    # source map artifacts uploaded for it (docs/source-maps.md).
    created_us: int | None = None
    finalized_us: int | None = None
    artifacts: list[artifacts.Artifact] = field(default_factory=list)


def release_view(store: Store, project_id: int, release: str, tr: TimeRange, now_us: int,
                 group_limit: int = 20) -> ReleaseView:
    now_s = now_us // 1_000_000
    total = rq.health(store, project_id, tr.start_s, tr.end_s, now_s, release=release,
                      by_environment=False)
    step = max(60, tr.step_s // 60 * 60)
    command = made.get(store, project_id, release)
    return ReleaseView(
        release=release, start_s=tr.start_s, end_s=tr.end_s,
        total=total[0] if total else None,
        environments=rq.health(store, project_id, tr.start_s, tr.end_s, now_s,
                               release=release),
        series=rq.series(store, project_id, release, tr.start_s, tr.end_s, step),
        step_s=step,
        deploys=[d for d in dq.list_deploys(store, project_id, tr.start_us, tr.end_us)
                 if d.version == release],
        new_groups=eq.groups_first_seen_in_release(store, project_id, release, group_limit),
        created_us=None if command is None else command.created_us,
        finalized_us=None if command is None else command.finalized_us,
        artifacts=artifacts.artifacts_of(store, project_id, release))


def _env_arg(handler: DashboardHandler) -> str | None:
    env = handler.get_argument("env", None)
    if env is not None and len(env) > MAX_RELEASE:
        raise HTTPError(400, f"'env' must be at most {MAX_RELEASE} characters")
    return env


def _release(raw: str) -> str:
    if len(raw) > MAX_RELEASE:
        raise HTTPError(404, f"no release is longer than {MAX_RELEASE} characters")
    return raw


class ReleasesPage(DashboardHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        tr = await self.page_range("7d")
        view = await self.run(releases_view, self.store, project.id, tr, _env_arg(self),
                              self.now_us)
        self.render("releases.html", view=view, tr=tr, section="releases")


class ReleasePage(DashboardHandler):
    async def get(self, project_name: str, release: str) -> None:
        project = await self.load_project(project_name)
        tr = await self.page_range("7d")
        view = await self.run(release_view, self.store, project.id, _release(release), tr,
                              self.now_us)
        chart = {"series": {"t": [p.start_s for p in view.series],
                            "count": [p.sessions for p in view.series]},
                 "deploys": [asdict(d) for d in view.deploys]}
        self.render("release.html", view=view, tr=tr, chart=chart, section="releases")


class ReleasesApi(ApiHandler):
    """Every release with sessions in the range (default 7d), per environment."""

    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        view = await self.run(releases_view, self.store, project.id, self.time_range("7d"),
                              _env_arg(self), self.now_us)
        self.write_json(asdict(view))


class ReleaseApi(ApiHandler):
    """One release: its health in the range (default 7d), in total and per
    environment, its sessions over time, its deploys, the groups first seen in it, and
    its source map artifacts with their debug ids."""

    read_scopes = ("read", "releases")  # a release's tool (sentry-cli) may read it

    async def get(self, project_name: str, release: str) -> None:
        project = await self.load_project(project_name)
        view = await self.run(release_view, self.store, project.id, _release(release),
                              self.time_range("7d"), self.now_us,
                              self.int_arg("limit", 20, 1, MAX_LIMIT) or 20)
        self.write_json(asdict(view))
