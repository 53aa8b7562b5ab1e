"""Deploys: the timeline per environment, markers for graphs, and each deploy's
correlation with performance (the same length of time before and after it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, func, or_, select

from storage import schema
from storage.queries import deploy_batch as batch
from storage.queries import deploy_windows, errors, performance
from storage.store import Store

_D = schema.deploys
US = 1_000_000
MINUTE = 60
# Below this many requests on either side, a change is noise and flags nothing.
MIN_REQUESTS = 20


@dataclass(frozen=True)
class Deploy:
    id: int
    git_sha: str
    version: str | None
    env: str | None
    deployer: str | None
    description: str | None
    ts_us: int
    service: str | None = None  # the service deployed; None: not named


@dataclass(frozen=True)
class Correlation:
    deploy: Deploy
    window_s: int  # the length asked for
    length_s: int  # the length used on each side, after clipping
    clipped_by: list[str]  # "previous deploy", "next deploy", "now"
    scope: str  # the environment compared, or "all environments"; the service named first
    before: performance.WindowStats
    after: performance.WindowStats
    new_groups: list[errors.Group]  # first seen in the after-window
    worse: bool
    reasons: list[str]  # why it is flagged worse
    # Groups first seen in the deploy's version (a release), wherever in time; empty
    # for a deploy without a version.
    release_groups: list[errors.Group] = field(default_factory=list)


def _deploy(row: Any) -> Deploy:
    return Deploy(int(row.id), row.git_sha, row.version, row.env, row.deployer,
                  row.description, int(row.ts_us), row.service)


def envs(store: Store, project_id: int) -> list[str | None]:
    """The environments deploys were recorded for (None: deploys without one)."""
    with store.reader.connect() as conn:
        rows = conn.execute(select(_D.c.env).where(_D.c.project_id == project_id)
                            .group_by(_D.c.env).order_by(_D.c.env)).all()
    return [r.env for r in rows]


def list_deploys(store: Store, project_id: int, start_us: int, end_us: int,
                 env: str | None = None, any_env: bool = True, limit: int = 500
                 ) -> list[Deploy]:
    """Deploys in [start_us, end_us), newest first. With any_env=False only those of
    `env` (None selects the deploys recorded without an environment)."""
    where = and_(_D.c.project_id == project_id, _D.c.ts_us >= start_us, _D.c.ts_us < end_us)
    if not any_env:
        where = and_(where, _D.c.env.is_(None) if env is None else _D.c.env == env)
    with store.reader.connect() as conn:
        rows = conn.execute(select(_D).where(where)
                            .order_by(_D.c.ts_us.desc(), _D.c.id.desc()).limit(limit)).all()
    return [_deploy(r) for r in rows]


def _neighbours(store: Store, project_id: int, deploy: Deploy) -> tuple[int | None, int | None]:
    """Timestamps of the previous and next deploy to the same environment; for a
    deploy naming a service, only of that service or of none: another service's
    deploy does not change its requests, so does not cut its comparison short."""
    same_env = _D.c.env.is_(None) if deploy.env is None else _D.c.env == deploy.env
    base = and_(_D.c.project_id == project_id, same_env, _D.c.id != deploy.id)
    if deploy.service is not None:
        base = and_(base, or_(_D.c.service.is_(None), _D.c.service == deploy.service))
    # One statement, two index lookups: the deploys page asks this of every deploy.
    prev = select(func.max(_D.c.ts_us)).where(and_(base, _D.c.ts_us < deploy.ts_us))
    nxt = select(func.min(_D.c.ts_us)).where(and_(base, _D.c.ts_us > deploy.ts_us))
    with store.reader.connect() as conn:
        row = conn.execute(select(prev.scalar_subquery(), nxt.scalar_subquery())).one()
    return row[0], row[1]


@dataclass(frozen=True)
class _Sides:
    length_s: int
    clipped_by: list[str]
    before: tuple[int, int]  # [start_s, end_s) of whole minutes
    after: tuple[int, int]


def _sides(deploy: Deploy, window_s: int, now_us: int, prev_us: int | None,
           next_us: int | None) -> _Sides:
    at_s = deploy.ts_us // US
    limits = {"window": window_s}
    if prev_us is not None:
        limits["previous deploy"] = at_s - (prev_us + US - 1) // US
    if next_us is not None:
        limits["next deploy"] = next_us // US - at_s
    limits["now"] = now_us // US - at_s
    length = max(0, min(limits.values()))
    clipped_by = [name for name, value in limits.items()
                  if name != "window" and value < window_s and value == length]
    before_end = at_s // MINUTE * MINUTE
    after_start = -(-at_s // MINUTE) * MINUTE
    whole = length // MINUTE * MINUTE
    return _Sides(length, clipped_by, (before_end - whole, before_end),
                  (after_start, after_start + whole))


def correlate(store: Store, project_id: int, deploy: Deploy, window_s: int, now_us: int
              ) -> Correlation:
    """Compare the same length of time before and after a deploy.

    The length is `window_s`, shortened so that neither side crosses the previous
    or next deploy to the same environment (of the same service or of none, for a
    deploy naming one), nor now. Only whole minutes are compared
    (the rollups are per minute): the minute the deploy happened in is left out
    unless the deploy is on the minute. Requests are taken from the deploy's
    environment; when no request ever carried that environment (or the deploy has
    none), from every environment of the project. A deploy naming a service compares
    that service's requests only: another service's slowdown is not its doing.

    One deploy, a handful of statements; correlate_all does many in a few.
    """
    sides = _sides(deploy, window_s, now_us, *_neighbours(store, project_id, deploy))
    env: str | None = deploy.env
    if env is not None and not performance.has_env(store, project_id, env):
        env = None
    before = performance.window(store, project_id, *sides.before, deploy.service, env)
    after = performance.window(store, project_id, *sides.after, deploy.service, env)
    new_groups = errors.groups_first_seen(store, project_id, deploy.ts_us,
                                          deploy.ts_us + sides.length_s * US)
    release_groups = (errors.groups_first_seen_in_release(store, project_id, deploy.version)
                      if deploy.version else [])
    return _correlation(deploy, window_s, sides, env, before, after, new_groups,
                        release_groups)


def _correlation(deploy: Deploy, window_s: int, sides: _Sides, env: str | None,
                 before: performance.WindowStats, after: performance.WindowStats,
                 new_groups: list[errors.Group], release_groups: list[errors.Group]
                 ) -> Correlation:
    reasons = worse_reasons(before, after)
    scope = env if env is not None else "all environments"
    if deploy.service is not None:
        scope = f"service {deploy.service} in {scope}"
    return Correlation(deploy, window_s, sides.length_s, sides.clipped_by, scope, before, after,
                       new_groups, bool(reasons), reasons, release_groups)


def correlate_all(store: Store, project_id: int, deploys: list[Deploy], window_s: int,
                  now_us: int) -> list[Correlation]:
    """correlate for each deploy, in five statements on one connection whatever their
    number (the deploys page): neighbours, environments with requests, every before
    and after window at once (a sixth for the latency rows not cached yet:
    storage/queries/deploy_windows.py), new groups, the releases' groups."""
    if not deploys:
        return []
    with store.reader.connect() as conn:
        near = batch.neighbours(conn, project_id, [d.id for d in deploys])
        sides = [_sides(d, window_s, now_us, *near[d.id]) for d in deploys]
        known = batch.envs_with_requests(conn, project_id,
                                         [d.env for d in deploys if d.env is not None])
        envs = [d.env if d.env in known else None for d in deploys]
        asked = [(*side, env, d.service) for d, s, env in zip(deploys, sides, envs, strict=True)
                 for side in (s.before, s.after)]
        stats = deploy_windows.windows(conn, project_id, asked)
        new_groups = batch.groups_first_seen(
            conn, project_id, [(d.ts_us, d.ts_us + s.length_s * US)
                               for d, s in zip(deploys, sides, strict=True)])
        released = batch.groups_first_seen_in_releases(
            conn, project_id, sorted({d.version for d in deploys if d.version}))
    return [_correlation(d, window_s, s, env, stats[2 * i], stats[2 * i + 1], new_groups[i],
                         released.get(d.version, []) if d.version else [])
            for i, (d, s, env) in enumerate(zip(deploys, sides, envs, strict=True))]


def worse_reasons(before: performance.WindowStats, after: performance.WindowStats
                  ) -> list[str]:
    """Why the after-window is clearly worse: the error rate at least 1.5 times and 2
    percentage points higher, or p95 latency at least 1.25 times and 20 ms higher;
    only with enough requests on both sides to mean anything."""
    if before.count < MIN_REQUESTS or after.count < MIN_REQUESTS:
        return []
    reasons = []
    rate_b, rate_a = before.error_rate or 0.0, after.error_rate or 0.0
    if rate_a >= 1.5 * rate_b and rate_a - rate_b >= 0.02:
        reasons.append(f"error rate {rate_b:.1%} \u2192 {rate_a:.1%}")
    p95_b, p95_a = before.p95_ms, after.p95_ms
    if p95_b is not None and p95_a is not None and p95_a >= 1.25 * p95_b \
            and p95_a - p95_b >= 20:
        reasons.append(f"p95 latency {p95_b:.0f} ms \u2192 {p95_a:.0f} ms")
    return reasons
