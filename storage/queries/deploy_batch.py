"""What the deploys page reads for every deploy it shows, a few statements for all of
them rather than a handful per deploy (storage/queries/deploys.py's correlate_all):
each deploy's neighbours, which environments have requests and the groups each
deploy brought (the before and after windows: storage/queries/deploy_windows.py).

Every result is the one the per-deploy reads of deploys.correlate give (its
_neighbours, performance.has_env and the errors queries); tests compare the two on
both engines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    CTE,
    BigInteger,
    Connection,
    Select,
    String,
    and_,
    cast,
    exists,
    func,
    literal,
    or_,
    select,
    union_all,
)

from storage import schema
from storage.queries import errors, facets

_D = schema.deploys
_G = schema.error_groups


def rows_cte(name: str, columns: Sequence[str], values: Sequence[Sequence[Any]]) -> CTE:
    """A small table of literal rows (integers, and strings or NULL for `env`), as a
    UNION ALL of one-row selects: SQLite has no column names for a VALUES list."""
    selects = [select(*(cast(literal(v, String), String).label(c) if c == "env"
                        else cast(literal(v, BigInteger), BigInteger).label(c)
                        for c, v in zip(columns, row, strict=True)))
               for row in values]
    both: Select[Any] | Any = union_all(*selects) if len(selects) > 1 else selects[0]
    return both.cte(name)


def neighbours(conn: Connection, project_id: int, ids: Sequence[int]
               ) -> dict[int, tuple[int | None, int | None]]:
    """Per deploy id: the timestamps of the previous and next deploy to the same
    environment that may touch its requests: of its service or of none, any service
    for a deploy naming none (deploys.py's _neighbours for each)."""
    if not ids:
        return {}
    o = _D.alias("o")

    def near(fn: Any, side: Any) -> Any:
        return select(fn(o.c.ts_us)).where(and_(
            o.c.project_id == project_id, o.c.env.is_not_distinct_from(_D.c.env),
            or_(_D.c.service.is_(None), o.c.service.is_(None), o.c.service == _D.c.service),
            o.c.id != _D.c.id, side)).scalar_subquery()

    rows = conn.execute(select(_D.c.id, near(func.max, o.c.ts_us < _D.c.ts_us),
                               near(func.min, o.c.ts_us > _D.c.ts_us))
                        .where(_D.c.id.in_(list(ids)))).all()
    return {int(r[0]): (r[1], r[2]) for r in rows}


def envs_with_requests(conn: Connection, project_id: int, envs: Sequence[str]) -> set[str]:
    """Those of `envs` some request was ever recorded for (performance.has_env)."""
    envs = sorted(set(envs))
    if not envs:
        return set()
    tables = (schema.request_rollups, schema.metric_request_rollups)
    row = conn.execute(select(*(or_(*(exists().where(and_(
        t.c.project_id == project_id, t.c.env == env)) for t in tables))
        for env in envs))).one()
    return {env for env, found in zip(envs, row, strict=True) if found}


def groups_first_seen(conn: Connection, project_id: int,
                      ranges: Sequence[tuple[int, int]], limit: int = 20
                      ) -> list[list[errors.Group]]:
    """errors.groups_first_seen(start_us, end_us) for each of `ranges`."""
    found: list[list[errors.Group]] = [[] for _ in ranges]
    if not ranges:
        return found
    r = rows_cte("ranges", ("k", "lo", "hi"), [(k, lo, hi) for k, (lo, hi)
                                                in enumerate(ranges)])
    ranked = (select(r.c.k, *errors.GROUP_COLUMNS, func.row_number().over(
        partition_by=r.c.k, order_by=(_G.c.first_seen_us, _G.c.id)).label("rn"))
        .select_from(r.join(_G, and_(_G.c.project_id == project_id,
                                     _G.c.first_seen_us >= r.c.lo,
                                     _G.c.first_seen_us < r.c.hi))).subquery())
    for row in conn.execute(select(ranked).where(ranked.c.rn <= limit)
                            .order_by(ranked.c.k, ranked.c.first_seen_us, ranked.c.id)):
        found[int(row.k)].append(errors.group_of(row))
    return found


def groups_first_seen_in_releases(conn: Connection, project_id: int,
                                  releases: Sequence[str], limit: int = 20
                                  ) -> dict[str, list[errors.Group]]:
    """errors.groups_first_seen_in_release for each of `releases`."""
    releases = sorted(set(releases))
    if not releases:
        return {}
    f = schema.error_group_facets
    # One select per release as errors.groups_first_seen_in_release makes it, with
    # the release as a constant: given a list instead (value IN (...)) the planner
    # may read every facet row of the project before statistics exist (1 s at 1M
    # errors).
    firsts = [select(literal(k).label("k"), *errors.GROUP_COLUMNS)
              .select_from(_G.join(f, and_(f.c.project_id == _G.c.project_id,
                                           f.c.fingerprint == _G.c.fingerprint)))
              .where(and_(_G.c.project_id == project_id, facets.is_first_release(release)))
              .order_by(_G.c.first_seen_us, _G.c.id).limit(limit).subquery()
              for k, release in enumerate(releases)]
    found: dict[str, list[errors.Group]] = {release: [] for release in releases}
    each = [select(sq) for sq in firsts]
    every = (union_all(*each) if len(each) > 1 else each[0]).subquery()
    for row in conn.execute(select(every).order_by(every.c.k, every.c.first_seen_us,
                                                   every.c.id)):
        found[releases[row.k]].append(errors.group_of(row))
    return found
