"""Deploys: the timeline per environment, markers for graphs, and each deploy's
correlation with performance (the same length of time before and after it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, func, select

from storage import schema
from storage.queries import errors, performance
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


@dataclass(frozen=True)
class Correlation:
    deploy: Deploy
    window_s: int  # the length asked for
    length_s: int  # the length used on each side, after clipping
    clipped_by: list[str]  # "previous deploy", "next deploy", "now"
    scope: str  # the environment compared, or "all environments"
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
                  row.description, int(row.ts_us))


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
    """Timestamps of the previous and next deploy to the same environment."""
    same_env = _D.c.env.is_(None) if deploy.env is None else _D.c.env == deploy.env
    base = and_(_D.c.project_id == project_id, same_env, _D.c.id != deploy.id)
    with store.reader.connect() as conn:
        prev = conn.execute(select(func.max(_D.c.ts_us))
                            .where(and_(base, _D.c.ts_us < deploy.ts_us))).scalar()
        nxt = conn.execute(select(func.min(_D.c.ts_us))
                           .where(and_(base, _D.c.ts_us > deploy.ts_us))).scalar()
    return prev, nxt


def correlate(store: Store, project_id: int, deploy: Deploy, window_s: int, now_us: int
              ) -> Correlation:
    """Compare the same length of time before and after a deploy.

    The length is `window_s`, shortened so that neither side crosses the previous
    or next deploy to the same environment, nor now. Only whole minutes are compared
    (the rollups are per minute): the minute the deploy happened in is left out
    unless the deploy is on the minute. Requests are taken from the deploy's
    environment; when no request ever carried that environment (or the deploy has
    none), from every environment of the project.
    """
    prev_us, next_us = _neighbours(store, project_id, deploy)
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
    env: str | None = deploy.env
    if env is not None and not performance.has_env(store, project_id, env):
        env = None
    before = performance.window(store, project_id, before_end - whole, before_end, env=env)
    after = performance.window(store, project_id, after_start, after_start + whole, env=env)
    new_groups = errors.groups_first_seen(store, project_id, deploy.ts_us,
                                          deploy.ts_us + length * US)
    reasons = worse_reasons(before, after)
    release_groups = (errors.groups_first_seen_in_release(store, project_id, deploy.version)
                      if deploy.version else [])
    return Correlation(deploy, window_s, length, clipped_by,
                       env if env is not None else "all environments", before, after,
                       new_groups, bool(reasons), reasons, release_groups)


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
