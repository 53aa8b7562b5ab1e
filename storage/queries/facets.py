"""Facets of error groups (`error_group_facets`, counted by storage/writer/facets.py):
a group's distribution of environments, releases, services, levels and tags, the
release it was first seen in, the values a project's error list filters by, and the
filter itself (a group matches when its facet row exists)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, exists, func, select
from sqlalchemy.sql.elements import ColumnElement

from storage import schema
from storage.queries import members as mq
from storage.rows import FACET_LENGTH, FIELD_FACETS, USER_FACET
from storage.store import Store

# What the error list filters by (docs/api.md).
FILTERS = ("environment", "release", "service")
# The longest value a facet holds (longer ones are held cut), so the longest a filter
# needs: the read API refuses longer ones.
MAX_VALUE = FACET_LENGTH
TOP_VALUES = 10

_F = schema.error_group_facets


@dataclass(frozen=True)
class FacetValue:
    value: str
    count: int
    share: float  # of the facet's total, 0 to 1
    first_seen_us: int
    last_seen_us: int


@dataclass(frozen=True)
class Facet:
    name: str  # environment, release, service, level, or a tag's key
    total: int  # errors of the group with this facet set
    distinct: int  # values, of which `values` are the most frequent
    values: list[FacetValue]
    other: int  # errors with a value beyond those listed


@dataclass(frozen=True)
class Labels:
    """Every value a project's errors had, for the error list's filter dropdowns."""

    environments: list[str]
    releases: list[str]
    services: list[str]


def stored_value(value: str) -> str:
    """A value as the facet table holds it (storage/rows.py's FACET_LENGTH), so that
    a filter on a longer one still finds its groups."""
    return value[:FACET_LENGTH]


def matching(project_id: Any, fingerprint: Any, filters: Mapping[str, str]
             ) -> ColumnElement[bool] | None:
    """The groups (whose project and fingerprint columns are given) that have every
    `facet=value` of `filters`; None without filters. One EXISTS on the facets'
    primary key per filter."""
    clauses = [exists().where(and_(_F.c.project_id == project_id,
                                   _F.c.fingerprint == fingerprint, _F.c.facet == facet,
                                   _F.c.value == stored_value(value)))
               for facet, value in sorted(filters.items())]
    return and_(*clauses) if clauses else None


def _order(name: str) -> tuple[int, str]:
    """The fields first, in FIELD_FACETS' order, then the tags by key."""
    return (FIELD_FACETS.index(name), "") if name in FIELD_FACETS else (len(FIELD_FACETS), name)


def distribution(store: Store, project_id: int, fingerprint: str | Sequence[str],
                 top: int = TOP_VALUES) -> list[Facet]:
    """Each facet of a group (or of a merged group's members, summed) with its `top`
    most frequent values (ties by value)."""
    count = func.sum(_F.c.count)
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(_F.c.facet, _F.c.value, count.label("count"),
                   func.min(_F.c.first_seen_us).label("first_seen_us"),
                   func.max(_F.c.last_seen_us).label("last_seen_us"))
            # The user ids are counted for the list's users affected, not shown as a
            # facet: a group's ids are already on its occurrences.
            .where(and_(_F.c.project_id == project_id,
                        mq.one_of(_F.c.fingerprint, fingerprint), _F.c.facet != USER_FACET))
            .group_by(_F.c.facet, _F.c.value)
            .order_by(_F.c.facet, count.desc(), _F.c.value)).all()
    by_facet: dict[str, list[Any]] = {}
    for row in rows:
        by_facet.setdefault(row.facet, []).append(row)
    out = []
    for name in sorted(by_facet, key=_order):
        values = by_facet[name]
        total = sum(int(r.count) for r in values)
        listed = [FacetValue(r.value, int(r.count), int(r.count) / total if total else 0.0,
                             int(r.first_seen_us), int(r.last_seen_us)) for r in values[:top]]
        out.append(Facet(name, total, len(values), listed,
                         total - sum(v.count for v in listed)))
    return out


def first_release(store: Store, project_id: int, fingerprint: str | Sequence[str]
                  ) -> str | None:
    """The release of the group's earliest error that had one (None: no error had)."""
    with store.reader.connect() as conn:
        return conn.execute(
            select(_F.c.value)
            .where(and_(_F.c.project_id == project_id,
                        mq.one_of(_F.c.fingerprint, fingerprint),
                        _F.c.facet == "release"))
            .order_by(_F.c.first_seen_us, _F.c.value).limit(1)).scalar()


def is_first_release(release: str) -> ColumnElement[bool]:
    """Facet rows (`error_group_facets`) of `release` that are their group's first
    release: no release of the group was seen earlier (or as early, sorting first)."""
    earlier = _F.alias("earlier")
    value = stored_value(release)
    return and_(_F.c.facet == "release", _F.c.value == value, ~exists().where(and_(
        earlier.c.project_id == _F.c.project_id, earlier.c.fingerprint == _F.c.fingerprint,
        earlier.c.facet == "release",
        (earlier.c.first_seen_us < _F.c.first_seen_us)
        | and_(earlier.c.first_seen_us == _F.c.first_seen_us, earlier.c.value < value))))


def labels(store: Store, project_id: int) -> Labels:
    """The distinct environments, releases and services of a project's errors, each
    sorted (read from the facets' (project, facet, value) index)."""
    found: dict[str, list[str]] = {name: [] for name in FILTERS}
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(_F.c.facet, _F.c.value)
            .where(and_(_F.c.project_id == project_id, _F.c.facet.in_(FILTERS)))
            .group_by(_F.c.facet, _F.c.value).order_by(_F.c.facet, _F.c.value)).all()
    for facet, value in rows:
        found[facet].append(value)
    return Labels(found["environment"], found["release"], found["service"])



def group_values(store: Store, project_id: int, listed: list[str],
                 facets: tuple[str, ...] = ("environment", "release"),
                 members: mq.Members | None = None) -> dict[str, dict[str, list[str]]]:
    """{fingerprint: {facet: values}} of the listed groups (with their `members`' when
    merged), each facet's values the most recently seen first: the chips of the error
    list's rows."""
    out: dict[str, dict[str, list[str]]] = {fp: {} for fp in listed}
    if not listed:
        return out
    fingerprints, root = mq.expand(listed, members)
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(_F.c.fingerprint, _F.c.facet, _F.c.value)
            .where(and_(_F.c.project_id == project_id, _F.c.fingerprint.in_(fingerprints),
                        _F.c.facet.in_(facets)))
            .order_by(_F.c.last_seen_us.desc(), _F.c.value)).all()
    for fp, facet, value in rows:
        values = out[root[fp]].setdefault(facet, [])
        if value not in values:  # a value two members had
            values.append(value)
    return out


@dataclass(frozen=True)
class RowFacts:
    """What the error list says under a group's title, from its facets."""

    users: int  # distinct user ids of its stored errors (0: none had one)
    first_release: str | None  # the release of its earliest error that had one


def row_facts(store: Store, project_id: int, listed: list[str],
              members: mq.Members | None = None) -> dict[str, RowFacts]:
    """Users affected and first release of the listed groups (with their `members`'
    when merged): two reads on the facets' primary key, whatever the number of errors
    (the user ids are counted once each as the writer stores them)."""
    if not listed:
        return {}
    fingerprints, root = mq.expand(listed, members)
    mine = and_(_F.c.project_id == project_id, _F.c.fingerprint.in_(fingerprints))
    merged = [fp for fp in listed if len((members or {}).get(fp, ())) > 1]
    with store.reader.connect() as conn:
        users: dict[str, int] = dict(conn.execute(
            select(_F.c.fingerprint, func.count())
            .where(and_(mine, _F.c.facet == USER_FACET)).group_by(_F.c.fingerprint)).all())
        # A user two members saw is one user: distinct values over the members.
        for fp in merged:
            users[fp] = int(conn.execute(
                select(func.count(func.distinct(_F.c.value))).where(and_(
                    _F.c.project_id == project_id, _F.c.facet == USER_FACET,
                    _F.c.fingerprint.in_(list((members or {})[fp]))))).scalar_one())
        releases = conn.execute(
            select(_F.c.fingerprint, _F.c.value).where(and_(mine, _F.c.facet == "release"))
            .order_by(_F.c.first_seen_us.desc(), _F.c.value.desc())).all()
    # Earliest last: the dict keeps each group's earliest release (ties: the smallest
    # value, as first_release orders them).
    first = {root[fp]: value for fp, value in releases}
    return {fp: RowFacts(int(users.get(fp, 0)), first.get(fp)) for fp in listed}
