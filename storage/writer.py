"""Writing batches: what one group commit does inside its one transaction.

Every statement is an insert or an atomic upsert (`count = count + n`), never a
read-modify-write, so several collector processes can write one database and the
counts stay exact. Keys are written in sorted order so that two PostgreSQL
transactions touching the same groups lock them in the same order and cannot
deadlock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from sqlalchemy import Connection, and_, case, update

from sounding import histogram
from sounding.records import Batch, GroupDelta
from storage import schema
from storage.upsert import greatest, insert, least

SERVER_ERROR = 500


def write_batches(conn: Connection, batches: Sequence[Batch], received_us: int) -> None:
    dialect = conn.dialect.name
    _write_spans(conn, dialect, batches)
    _write_error_events(conn, batches, received_us)
    _write_groups(conn, dialect, batches)
    _write_deploys(conn, batches, received_us)
    _write_requests(conn, dialect, batches)


def _write_spans(conn: Connection, dialect: str, batches: Sequence[Batch]) -> None:
    rows = [
        {
            "project_id": batch.project_id,
            "trace_id": s.trace_id,
            "span_id": s.span_id,
            "parent_span_id": s.parent_span_id,
            "name": s.name,
            "kind": s.kind,
            "start_ns": s.start_ns,
            "end_ns": s.end_ns,
            "status_code": s.status_code,
            "status_message": s.status_message,
            "service_name": s.service_name,
            "scope_name": s.scope_name,
            "category": s.category or "custom",
            "resource_attributes": s.resource_attributes,
            "attributes": s.attributes,
            "semantic": s.semantic,
            "events": s.events,
        }
        for batch in batches
        for s in batch.spans
    ]
    if rows:
        # An exporter that retries a batch we already committed must not duplicate it.
        conn.execute(insert(dialect, schema.spans).on_conflict_do_nothing(), rows)


def _write_error_events(conn: Connection, batches: Sequence[Batch], received_us: int) -> None:
    rows = [
        {
            "project_id": batch.project_id,
            "fingerprint": e.fingerprint,
            "ts_us": e.ts_us,
            "received_us": received_us,
            "exception_class": e.exception_class,
            "message": e.message,
            "backtrace": e.backtrace,
            "params": e.params,
            "source_context": asdict(e.source_context) if e.source_context else None,
            "request_id": e.request_id,
            "user_id": e.user_id,
            "trace_id": e.trace_id,
            "span_id": e.span_id,
        }
        for batch in batches
        for e in batch.errors
    ]
    if rows:
        conn.execute(schema.error_events.insert(), rows)


def _merge_groups(batches: Sequence[Batch]) -> dict[tuple[int, str], GroupDelta]:
    merged: dict[tuple[int, str], GroupDelta] = {}
    for batch in batches:
        for fingerprint, delta in batch.groups.items():
            key = (batch.project_id, fingerprint)
            seen = merged.get(key)
            if seen is None:
                merged[key] = GroupDelta(**{**asdict(delta), "hourly": dict(delta.hourly)})
                continue
            if delta.last_seen_us >= seen.last_seen_us:
                seen.exception_class, seen.message = delta.exception_class, delta.message
            seen.count += delta.count
            seen.first_seen_us = min(seen.first_seen_us, delta.first_seen_us)
            seen.last_seen_us = max(seen.last_seen_us, delta.last_seen_us)
            for hour, n in delta.hourly.items():
                seen.hourly[hour] = seen.hourly.get(hour, 0) + n
    return merged


def _write_groups(conn: Connection, dialect: str, batches: Sequence[Batch]) -> None:
    reopen: dict[tuple[int, str], int] = {}
    for batch in batches:
        for fingerprint, ts_us in batch.reopen_after.items():
            key = (batch.project_id, fingerprint)
            reopen[key] = max(ts_us, reopen.get(key, ts_us))
    groups = _merge_groups(batches)
    if not groups and not reopen:
        return
    g = schema.error_groups
    # Reopen first: a resolved group whose new event is later than its resolution.
    for (project_id, fingerprint), ts_us in sorted(reopen.items()):
        reopened = conn.execute(
            update(g)
            .where(and_(g.c.project_id == project_id, g.c.fingerprint == fingerprint,
                        g.c.status == "resolved", g.c.resolved_us < ts_us))
            .values(status="open", reopen_count=g.c.reopen_count + 1, last_reopened_us=ts_us)
            .returning(g.c.id)
        ).first()
        if reopened is not None:
            conn.execute(schema.error_status_changes.insert(), {
                "project_id": project_id, "fingerprint": fingerprint, "from_status": "resolved",
                "to_status": "open", "reason": "recurrence", "at_us": ts_us})
    if not groups:
        return
    rows = [
        {
            "project_id": project_id,
            "fingerprint": fingerprint,
            "exception_class": d.exception_class,
            "message": d.message,
            "first_seen_us": d.first_seen_us,
            "last_seen_us": d.last_seen_us,
            "count": d.count,
            "status": "open",
            "reopen_count": 0,
        }
        for (project_id, fingerprint), d in sorted(groups.items())
    ]
    stmt = insert(dialect, g)
    new = stmt.excluded
    is_latest = new.last_seen_us >= g.c.last_seen_us
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=[g.c.project_id, g.c.fingerprint],
            set_={
                "count": g.c.count + new.count,
                "first_seen_us": least(dialect, g.c.first_seen_us, new.first_seen_us),
                "last_seen_us": greatest(dialect, g.c.last_seen_us, new.last_seen_us),
                "exception_class": case((is_latest, new.exception_class),
                                        else_=g.c.exception_class),
                "message": case((is_latest, new.message), else_=g.c.message),
            },
        ),
        rows,
    )
    hourly = [
        {"project_id": project_id, "fingerprint": fingerprint, "hour": hour, "count": n}
        for (project_id, fingerprint), d in sorted(groups.items())
        for hour, n in sorted(d.hourly.items())
    ]
    h = schema.error_group_hourly
    hstmt = insert(dialect, h)
    conn.execute(
        hstmt.on_conflict_do_update(
            index_elements=[h.c.project_id, h.c.fingerprint, h.c.hour],
            set_={"count": h.c.count + hstmt.excluded.count},
        ),
        hourly,
    )


def _write_deploys(conn: Connection, batches: Sequence[Batch], received_us: int) -> None:
    rows = [
        {
            "project_id": batch.project_id,
            "git_sha": d.git_sha,
            "version": d.version,
            "env": d.env,
            "deployer": d.deployer,
            "description": d.description,
            "ts_us": d.ts_us,
            "received_us": received_us,
        }
        for batch in batches
        for d in batch.deploys
    ]
    if rows:
        conn.execute(schema.deploys.insert(), rows)


RollupKey = tuple[int, str, str, str, str, int]


def _write_requests(conn: Connection, dialect: str, batches: Sequence[Batch]) -> None:
    rollups: dict[RollupKey, list[Any]] = {}
    buckets: dict[tuple[RollupKey, int], int] = {}
    for batch in batches:
        for r in batch.requests:
            minute = r.ts_us // 60_000_000 * 60
            key: RollupKey = (batch.project_id, r.service, r.env, r.method, r.route, minute)
            agg = rollups.get(key)
            if agg is None:
                agg = rollups[key] = [0, 0, 0.0]
            agg[0] += 1
            agg[1] += r.status >= SERVER_ERROR
            agg[2] += r.duration_ms
            bkey = (key, histogram.bucket_of(r.duration_ms))
            buckets[bkey] = buckets.get(bkey, 0) + 1
    if not rollups:
        return
    names = schema.ROLLUP_KEY
    r_table = schema.request_rollups
    stmt = insert(dialect, r_table)
    conn.execute(
        stmt.on_conflict_do_update(
            index_elements=[r_table.c[n] for n in names],
            set_={
                "count": r_table.c.count + stmt.excluded.count,
                "error_count": r_table.c.error_count + stmt.excluded.error_count,
                "duration_sum_ms": r_table.c.duration_sum_ms + stmt.excluded.duration_sum_ms,
            },
        ),
        [
            {**dict(zip(names, key, strict=True)), "count": c, "error_count": e,
             "duration_sum_ms": s}
            for key, (c, e, s) in sorted(rollups.items())
        ],
    )
    l_table = schema.request_latency
    lstmt = insert(dialect, l_table)
    conn.execute(
        lstmt.on_conflict_do_update(
            index_elements=[l_table.c[n] for n in (*names, "bucket")],
            set_={"count": l_table.c.count + lstmt.excluded.count},
        ),
        [
            {**dict(zip(names, key, strict=True)), "bucket": bucket, "count": n}
            for (key, bucket), n in sorted(buckets.items())
        ],
    )
