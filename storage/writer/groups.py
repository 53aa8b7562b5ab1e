"""The aggregated part of a group commit: error groups with their hourly counts and
reopening (and the alert facts of new and reopened groups: storage/writer/alert_facts.py),
and request-metric rollups with their latency histograms.

Each touched error group and each rollup row costs one upsert per commit, however
many events or requests of the commit fall into it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import Any

from model import histogram
from model.groupcounts import GroupDelta
from storage import rows
from storage.rows import FACET_LENGTH, ISSUE_TYPES, Row, WireBatch
from storage.writer import alert_facts, group_deltas, in_chunks, snooze
from storage.writer import merged as writer_merged
from storage.writer.alert_facts import NewGroup, Reopened
from storage.writer.copy import copy_types, upsert_rows
from storage.writer.hourly import upsert_hourly
from storage.writer.placeholders import mark
from storage.writer.rollups import upsert_pair

SERVER_ERROR = 500
# Names from storage/rows.py, as storage/schema/ uses them (storage/writer/commit.py says
# why not from the schema).
GROUPS, HOURLY = rows.ERROR_GROUPS, rows.ERROR_GROUP_HOURLY
STATUS_CHANGES = rows.ERROR_STATUS_CHANGES
FACETS = rows.ERROR_GROUP_FACETS
# Positions in the writer's insert rows of stored errors: (project_id, *wire row, received_us).
_STORED = itemgetter(*(1 + rows.ERROR_EVENTS.position(name)
                       for name in ("fingerprint", "ts_us", "release")))
ROLLUPS, LATENCY = rows.REQUEST_ROLLUPS, rows.REQUEST_LATENCY
ROLLUP_KEY = rows.ROLLUP_KEY.column_names
_ROLLUP_KEY_TYPES = copy_types(rows.ROLLUP_KEY, ROLLUP_KEY)
# The values of the wire rows, read by name.
_REOPEN = rows.REOPEN.getter("fingerprint", "ts_us")
_REQUEST = rows.REQUESTS.getter("service", "env", "method", "route", "ts_us", "status",
                                "duration_ms")
GroupKey = tuple[int, str]
RollupKey = tuple[int, str, str, str, str, int]
# Groups per upsert statement on SQLite (7 values each): a statement of many rows,
# not one `executemany`, so that its RETURNING says which groups it inserted.
# PostgreSQL takes every group of a commit in one statement (arrays, not values).
UPSERT_CHUNK = 500


def _greatest(dialect: str) -> str:
    # SQLite's two-argument max() is scalar; PostgreSQL spells it GREATEST.
    return "GREATEST" if dialect == "postgresql" else "max"


def _least(dialect: str) -> str:
    return "LEAST" if dialect == "postgresql" else "min"


def _merge_groups(batches: Sequence[WireBatch]) -> dict[GroupKey, GroupDelta]:
    """One delta per (project, fingerprint) over every batch of the commit."""
    merged: dict[GroupKey, GroupDelta] = {}
    for batch in batches:
        project_id = batch.project_id
        for delta in group_deltas.deltas(batch.groups):
            key = (project_id, delta.fingerprint)
            seen = merged.get(key)
            if seen is None:
                merged[key] = delta
            else:
                seen.add(delta)
    return merged


def _new_releases(stored: Sequence[Row], merged: Mapping[GroupKey, GroupKey]
                  ) -> dict[GroupKey, list[tuple[int, str]]]:
    """(time, release) of the commit's stored errors that had a release, per group
    (a merged group's in its target's)."""
    out: dict[GroupKey, list[tuple[int, str]]] = {}
    for row in stored:
        fingerprint, ts_us, release = _STORED(row)
        if release:
            key = (row[0], fingerprint)
            out.setdefault(merged.get(key, key), []).append((ts_us, release[:FACET_LENGTH]))
    return out


def _next_release_holds(cursor: Any, dialect: str, key: GroupKey, resolved_us: int,
                        seen: list[tuple[int, str]]) -> bool:
    """Of a group resolved in the next release: does an error of this commit, later than
    the resolution, come from a release the group had not seen by then? (Its facets
    say which it had: storage/writer/facets.py counts them after the groups; those of
    the groups merged into it count as its own.)"""
    later = sorted({release for ts_us, release in seen if ts_us > resolved_us})
    if not later:
        return False
    q = mark(dialect)
    cursor.execute(
        f'SELECT value FROM "{FACETS}" WHERE project_id = {q} '
        f"AND fingerprint IN ({writer_merged.members_sql(dialect)}) "
        f"AND facet = 'release' AND first_seen_us <= {q} "
        f"AND value IN ({', '.join([q] * len(later))})",
        (key[0], *key, *key, resolved_us, *later))
    return bool(set(later) - {row[0] for row in cursor.fetchall()})


def _reopen(cursor: Any, dialect: str, batches: Sequence[WireBatch],
            stored: Sequence[Row] = (), merged: Mapping[GroupKey, GroupKey] | None = None
            ) -> list[Reopened]:
    """Resolved groups whose new occurrence is later than their resolution open again
    (resolved in the next release: only on an error of a release they had not seen by
    then); returns those this commit reopened. An error of a group in `merged` (source:
    target) is its target's (storage/writer/merged.py)."""
    merged = merged or {}
    latest: dict[GroupKey, int] = {}
    for batch in batches:
        for fingerprint, ts_us in map(_REOPEN, batch.reopen):
            key = (batch.project_id, fingerprint)
            key = merged.get(key, key)
            latest[key] = max(ts_us, latest.get(key, ts_us))
    if not latest:
        return []
    q = mark(dialect)
    # Most touched groups are open: find the few resolved ones with one query per chunk
    # instead of one update per group.
    candidates: list[GroupKey] = []
    waiting: dict[GroupKey, int] = {}  # resolved in the next release: when
    for project_id, chunk in in_chunks.by_project(latest):
        cursor.execute(
            f'SELECT fingerprint, resolved_us, resolved_release FROM "{GROUPS}" '
            f"WHERE project_id = {q} AND status = 'resolved' "
            f"AND fingerprint IN ({', '.join([q] * len(chunk))})",
            (project_id, *chunk))
        for fingerprint, resolved_us, resolved_release in cursor.fetchall():
            candidates.append((project_id, fingerprint))
            if resolved_release is not None and resolved_us is not None:
                waiting[(project_id, fingerprint)] = int(resolved_us)
    releases = _new_releases(stored, merged) if waiting else {}
    reopened: list[Reopened] = []
    for project_id, fingerprint in sorted(candidates):
        key = (project_id, fingerprint)
        if key in waiting and not _next_release_holds(cursor, dialect, key, waiting[key],
                                                      releases.get(key, [])):
            continue
        ts_us = latest[key]
        # The update decides atomically: of two collectors, only one reopens the group.
        cursor.execute(
            f'UPDATE "{GROUPS}" SET status = \'open\', resolved_us = NULL, '
            "resolved_release = NULL, "
            f"reopen_count = reopen_count + 1, last_reopened_us = {q} "
            f"WHERE project_id = {q} AND fingerprint = {q} AND status = 'resolved' "
            f"AND resolved_us < {q} RETURNING reopen_count, count, first_seen_us",
            (ts_us, project_id, fingerprint, ts_us))
        row = cursor.fetchone()
        if row is not None:
            reopened.append(Reopened(project_id, fingerprint, int(row[0]), int(row[1]),
                                     int(row[2]), ts_us))
            cursor.execute(
                f'INSERT INTO "{STATUS_CHANGES}" (project_id, fingerprint, '
                f"from_status, to_status, reason, at_us) VALUES ({q}, {q}, 'resolved', 'open', "
                f"'recurrence', {q})", (project_id, fingerprint, ts_us))
    return reopened


def _upsert_sql(dialect: str, n: int, issue_type: str) -> str:
    """SQLite: `n` rows of values. PostgreSQL: one row per element of seven arrays,
    however many groups (storage/writer/copy.py's `upsert_rows` says why). A group
    inserted is of `issue_type` (one of the schema's ISSUE_TYPES, a literal here)."""
    if issue_type not in ISSUE_TYPES:
        raise ValueError(f"issue_type must be one of {ISSUE_TYPES}, got {issue_type!r}")
    q, g = mark(dialect), GROUPS
    latest = f'excluded.last_seen_us >= "{g}".last_seen_us'
    if dialect == "postgresql":
        source = (f"SELECT p, f, c, m, fs, ls, n, 'open', 0, '{issue_type}' "
                  "FROM unnest(%s::int4[], "
                  "%s::text[], %s::text[], %s::text[], %s::int8[], %s::int8[], %s::int8[]) "
                  "AS u(p, f, c, m, fs, ls, n)")
    else:
        source = "VALUES " + ", ".join(
            [f"({q}, {q}, {q}, {q}, {q}, {q}, {q}, 'open', 0, '{issue_type}')"] * n)
    return (
        f'INSERT INTO "{g}" (project_id, fingerprint, exception_class, message, first_seen_us, '
        f"last_seen_us, count, status, reopen_count, issue_type) {source} "
        f"ON CONFLICT (project_id, fingerprint) DO UPDATE SET "
        f'count = "{g}".count + excluded.count, '
        f'first_seen_us = {_least(dialect)}("{g}".first_seen_us, excluded.first_seen_us), '
        f'last_seen_us = {_greatest(dialect)}("{g}".last_seen_us, excluded.last_seen_us), '
        f'exception_class = CASE WHEN {latest} THEN excluded.exception_class '
        f'ELSE "{g}".exception_class END, '
        f'message = CASE WHEN {latest} THEN excluded.message ELSE "{g}".message END '
        # A group that was there has counted errors before: its count after the update
        # is more than the delta's. Only an inserted one returns the delta's count.
        "RETURNING project_id, fingerprint, count")


def _upsert(cursor: Any, dialect: str, ordered: list[tuple[GroupKey, GroupDelta]],
            issue_type: str) -> list[NewGroup]:
    """Add the deltas (in key order, so that PostgreSQL transactions lock groups in
    one order); returns the groups inserted."""
    new: list[NewGroup] = []
    pg = dialect == "postgresql"
    step = len(ordered) if pg else UPSERT_CHUNK
    for start in range(0, len(ordered), step):
        chunk = ordered[start:start + step]
        values = [(project_id, fingerprint, d.exception_class, d.message,
                   d.first_seen_us, d.last_seen_us, d.count)
                  for (project_id, fingerprint), d in chunk]
        cursor.execute(_upsert_sql(dialect, len(chunk), issue_type),
                       [list(column) for column in zip(*values, strict=True)] if pg
                       else [value for row in values for value in row])
        deltas = dict(chunk)
        for project_id, fingerprint, count in cursor.fetchall():
            d = deltas[(int(project_id), fingerprint)]
            if count == d.count:
                new.append(NewGroup(int(project_id), fingerprint, d.exception_class,
                                    d.message, d.count, d.first_seen_us, d.last_seen_us))
    return new


def write_groups(cursor: Any, dialect: str, batches: Sequence[WireBatch],
                 stored: Sequence[Row] = (), received_us: int = 0,
                 issue_type: str = "error") -> None:
    """Reopen, upsert and count the commit's groups, and record the alert facts of
    those it inserted or reopened; `stored` are the insert rows of the errors it
    stored, `received_us` the commit's time, `issue_type` the groups' (the type of
    those it inserts, named in their alert facts)."""
    groups = _merge_groups(batches)
    touched = set(groups).union(*({(b.project_id, _REOPEN(r)[0]) for r in b.reopen}
                                  for b in batches))
    # Merged groups count on their own rows, but reopen and wake their targets.
    merged = writer_merged.targets(cursor, dialect, touched) if touched else {}
    reopened = _reopen(cursor, dialect, batches, stored, merged)
    # A regression of a target reopened by a source's error names that error.
    facts = {**{merged[k]: d for k, d in groups.items() if k in merged}, **groups}
    if not groups:
        alert_facts.record(cursor, dialect, (), reopened, facts, stored, received_us,
                           issue_type)
        return
    ordered = sorted(groups.items())
    new = _upsert(cursor, dialect, ordered, issue_type)
    alert_facts.record(cursor, dialect, new, reopened, facts, stored, received_us, issue_type)
    h = HOURLY
    upsert_rows(cursor, dialect, h, ("project_id", "fingerprint", "hour", "count"),
                ("int4", "text", "int8", "int8"),
                f'ON CONFLICT (project_id, fingerprint, hour) DO UPDATE SET '
                f'count = "{h}".count + excluded.count',
                [(project_id, fingerprint, hour, n)
                 for (project_id, fingerprint), d in ordered
                 for hour, n in sorted(d.hourly.items())])
    # After the counts: a snooze's condition reads them (storage/writer/snooze.py).
    # A merged group's errors wake its target.
    woken: dict[GroupKey, tuple[int, list[int]]] = {}
    for key, d in ordered:
        target = merged.get(key, key)
        last, hours = woken.get(target, (d.last_seen_us, []))
        woken[target] = (max(last, d.last_seen_us), sorted({*hours, *d.hourly}))
    snooze.wake(cursor, dialect, woken)


def write_requests(cursor: Any, dialect: str, batches: Sequence[WireBatch]) -> None:
    rollups: dict[RollupKey, list[Any]] = {}
    buckets: dict[tuple[RollupKey, int], int] = {}
    bucket_of = histogram.bucket_of
    for batch in batches:
        project_id = batch.project_id
        for service, env, method, route, ts_us, status, duration_ms in map(
                _REQUEST, batch.requests):
            key: RollupKey = (project_id, service, env, method, route,
                              ts_us // 60_000_000 * 60)
            agg = rollups.get(key)
            if agg is None:
                agg = rollups[key] = [0, 0, 0.0]
            agg[0] += 1
            agg[1] += status >= SERVER_ERROR
            agg[2] += duration_ms
            bkey = (key, bucket_of(duration_ms))
            buckets[bkey] = buckets.get(bkey, 0) + 1
    upsert_rollups(cursor, dialect, rollups, buckets, ROLLUPS, LATENCY)


def upsert_rollups(cursor: Any, dialect: str, rollups: dict[RollupKey, list[Any]],
                   buckets: dict[tuple[RollupKey, int], int], rollups_table: str,
                   latency_table: str | None) -> None:
    """Add per-minute counts ([count, error count, duration sum in ms] per key) and
    latency buckets to a pair of rollup tables, or to one holding its buckets
    (`latency_table` None: storage/writer/rollups.py), in key order."""
    if not rollups:
        return
    upsert_pair(cursor, dialect, (rollups_table, latency_table), ROLLUP_KEY,
                _ROLLUP_KEY_TYPES, rollups, buckets)
    upsert_hourly(cursor, dialect, rollups, buckets, rollups_table)
