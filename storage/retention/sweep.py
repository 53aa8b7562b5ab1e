"""The retention sweep: delete what is older than each project's setting, per signal,
in short transactions (docs/storage.md, "Retention").

Every delete takes at most `batch_rows` rows in one transaction (BEGIN IMMEDIATE on
SQLite, through Store.writer) and the sweep pauses between two batches as long as
the batch took, so that the writer process never waits behind the sweep for more
than one batch: acknowledgements go on while a backlog of a year is deleted. Each
batch also renews the sweep's lease (storage/retention/leases.py) in its own transaction: a
sweeper whose lease was taken over stops at once, so two never sweep together.

How a batch is found: a project's oldest rows by the index on (project_id, time).
SQLite deletes them by rowid; PostgreSQL by primary key (its day partitions, when
storage/partitions.py makes them, repeat keys' ctids, so ctid would not do). The
latency histograms of the request rollups have no such index (it would cost every
new minute's buckets an index write): they are deleted with their rollup row, by
its key, which leads their primary key.

Error groups (docs/storage.md says what one shows): a group whose last occurrence is
past the occurrences' setting goes, with its hourly counts, facets and status
changes; a group still seen keeps its count, first seen, facets and history. A group
others were merged into (storage/groups/merge.py) stays while one of them is still seen:
the list shows them in it.

The audit log (storage/audit/) is kept `audit_log` seconds whatever the project: its
records go by age alone, oldest first, in the same short transactions; the sweep is
the only code that deletes them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text

from storage import partitions
from storage.retention import artifacts, leases
from storage.schema import metadata
from storage.store import Store

log = logging.getLogger(__name__)

LEASE = "retention"
# Of an error_groups row: no group merged into it was seen since the cutoff `:c`.
_NO_RECENT_MEMBER = ("NOT EXISTS (SELECT 1 FROM error_groups m WHERE "
                     "m.project_id = error_groups.project_id AND m.merged_into = error_groups.id "
                     "AND m.last_seen_us >= :c)")
LEASE_S = 120  # renewed by every batch; a sweeper that died frees it this late
NS, US = 1_000_000_000, 1_000_000  # per second


@dataclass(frozen=True)
class Target:
    """A table a signal's setting applies to: its time column and that column's units
    per second; `latency` is the histogram table deleted with each rollup row."""
    table: str
    column: str
    per_second: int
    latency: str | None = None


SWEPT_TABLES: dict[str, tuple[Target, ...]] = {
    "spans": (Target("spans", "start_ns", NS),),
    "logs": (Target("logs", "time_ns", NS),),
    # A series' exemplars expire with its points (a few rows a minute, by minute).
    "metric_points": (Target("metric_points", "time_ns", NS),
                      Target("metric_exemplars", "minute", 1)),
    "error_occurrences": (Target("error_events", "ts_us", US), Target("feedback", "ts_us", US)),
    "rollups": (Target("request_rollups", "minute", 1, latency="request_latency"),
                Target("metric_request_rollups", "minute", 1),  # buckets in the row
                Target("request_rollups_hourly", "hour", 1,
                       latency="request_latency_hourly"),
                Target("metric_request_rollups_hourly", "hour", 1),
                Target("error_group_hourly", "hour", 1),
                Target("operation_rollups", "minute", 1),
                Target("operation_rollups_hourly", "hour", 1),
                Target("edge_rollups", "minute", 1),
                Target("edge_rollups_hourly", "hour", 1),
                # Release health: its marks go with its rollups (storage/writer/sessions.py).
                Target("session_rollups", "minute", 1),
                Target("session_users", "hour", 1),
                Target("session_marks", "received_us", US),
                # A project's usage per hour (storage/limits/usage.py): the Stats page.
                Target("usage_hourly", "hour", 1)),
    "deploys": (Target("deploys", "ts_us", US),),
    "check_ins": (Target("cron_checkins", "ts_us", US),),
}
# Raw tables that PostgreSQL may keep in day partitions: dropped whole first.
PARTITIONED_SIGNALS = {"spans": "spans", "logs": "logs", "metric_points": "metric_points"}


@dataclass(frozen=True)
class Policy:
    """Seconds kept per signal (0: for ever), the defaults and per project name."""
    defaults: Mapping[str, int]
    projects: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    batch_rows: int = 5000
    audit_log: int = 0  # seconds the audit log is kept; 0: for ever
    # Source map bundles: those of the newest this many releases of a project are
    # kept, and those of releases that still have errors (storage/retention/artifacts.py).
    artifact_releases: int = 10

    def seconds(self, project: str, signal: str) -> int:
        return int(self.projects.get(project, {}).get(signal, self.defaults[signal]))

    def longest(self, signal: str) -> int:
        """The longest any project keeps `signal`; 0 when one keeps it for ever."""
        kept = [self.defaults[signal], *(p[signal] for p in self.projects.values()
                                         if signal in p)]
        return 0 if 0 in kept else max(kept)


@dataclass
class SweepReport:
    swept: bool = False  # False: another collector holds the lease
    deleted: dict[str, int] = field(default_factory=dict)  # table: rows
    groups: int = 0
    partitions: list[str] = field(default_factory=list)

    def add(self, table: str, n: int) -> None:
        if n:
            self.deleted[table] = self.deleted.get(table, 0) + n


class LeaseLost(Exception):
    """Another collector took the sweep over (ours expired): stop where we are."""


class Sweep:
    def __init__(self, store: Store, policy: Policy, holder: str, now_s: int,
                 stop: threading.Event | None = None) -> None:
        self.store = store
        self.policy = policy
        self.holder = holder
        self.now_s = now_s
        self.stop = stop or threading.Event()
        self.outcome = SweepReport()
        self.sqlite = store.dialect == "sqlite"

    def run(self) -> SweepReport:
        # The lease runs on the wall clock, whatever `now_s` the cutoffs are taken from.
        if not leases.take(self.store, LEASE, self.holder, int(time.time() * US),
                           LEASE_S * US):
            return self.outcome
        self.outcome.swept = True
        try:
            if not self.sqlite:
                self._partitions()
            with self.store.reader.connect() as conn:
                projects = list(conn.execute(text("SELECT id, name FROM projects ORDER BY id")))
            for project_id, name in projects:
                for signal, targets in SWEPT_TABLES.items():
                    kept = self.policy.seconds(name, signal)
                    if kept <= 0:
                        continue
                    cutoff_s = self.now_s - kept
                    for target in targets:
                        self._target(project_id, target, cutoff_s)
                    if signal == "error_occurrences":
                        self._groups(project_id, cutoff_s)
                # After the groups: a release whose errors all went loses its maps.
                self.outcome.add("artifact_bundles", artifacts.sweep_artifacts(
                    self.store, project_id, self.policy.artifact_releases, self.now_s))
            if self.policy.audit_log > 0:
                self._audit(self.now_s - self.policy.audit_log)
        except LeaseLost:
            log.warning("retention: another collector took the sweep over")
        finally:
            leases.release(self.store, LEASE, self.holder)
        return self.outcome

    # One transaction per batch.

    def _batches(self, batch: Callable[[Any], int]) -> int:
        """Run `batch(conn)` in its own transaction until it deletes nothing, pausing
        as long as each took; returns the rows deleted."""
        total = 0
        while not self.stop.is_set():
            started = time.monotonic()
            with self.store.writer.begin() as conn:
                if not leases.renew(conn, LEASE, self.holder, int(time.time() * US),
                                    LEASE_S * US):
                    raise LeaseLost
                n = batch(conn)
            total += n
            if n == 0:
                break
            # Yield the write lock: the writer process waits for it meanwhile.
            self.stop.wait(time.monotonic() - started)
        return total

    def _target(self, project_id: int, target: Target, cutoff_s: int) -> None:
        cutoff = cutoff_s * target.per_second
        where = f'project_id = :p AND "{target.column}" < :c'
        if target.latency is not None:
            n = self._batches(lambda conn: self._rollups(conn, target, where, project_id,
                                                         cutoff))
            self.outcome.add(target.table, n)
            return
        table = target.table
        if self.sqlite:
            sql = (f'DELETE FROM "{table}" WHERE rowid IN (SELECT rowid FROM "{table}" '
                   f"WHERE {where} LIMIT :n)")
        else:
            key = ", ".join(f'"{c.name}"' for c in metadata.tables[table].primary_key)
            sql = (f'DELETE FROM "{table}" WHERE ({key}) IN (SELECT {key} FROM "{table}" '
                   f"WHERE {where} LIMIT :n)")
        statement = text(sql)
        params = {"p": project_id, "c": cutoff, "n": self.policy.batch_rows}
        self.outcome.add(table, self._batches(
            lambda conn: int(conn.execute(statement, params).rowcount)))

    def _rollups(self, conn: Any, target: Target, where: str, project_id: int,
                 cutoff: int) -> int:
        """One batch of rollup rows, each with its latency histogram."""
        assert target.latency is not None
        names = [c.name for c in metadata.tables[target.table].primary_key]
        columns = ", ".join(f'"{c}"' for c in names)
        # A rollup row has a dozen histogram buckets or so: about batch_rows rows in all.
        limit = max(1, self.policy.batch_rows // 10)
        keys = [dict(zip(names, row, strict=True)) for row in conn.execute(
            text(f'SELECT {columns} FROM "{target.table}" WHERE {where} LIMIT :n'),
            {"p": project_id, "c": cutoff, "n": limit})]
        if not keys:
            return 0
        match = " AND ".join(f'"{c}" = :{c}' for c in names)
        latency = conn.execute(text(f'DELETE FROM "{target.latency}" WHERE {match}'), keys)
        conn.execute(text(f'DELETE FROM "{target.table}" WHERE {match}'), keys)
        self.outcome.add(target.latency, max(0, int(latency.rowcount)))
        return len(keys)

    def _groups(self, project_id: int, cutoff_s: int) -> None:
        """Groups whose last occurrence is past `cutoff_s`, with what is theirs alone."""
        cutoff_us = cutoff_s * US
        limit = max(1, self.policy.batch_rows // 10)

        def batch(conn: Any) -> int:
            found = list(conn.execute(text(
                "SELECT fingerprint FROM error_groups WHERE project_id = :p "
                f"AND last_seen_us < :c AND {_NO_RECENT_MEMBER} LIMIT :n"),
                {"p": project_id, "c": cutoff_us, "n": limit}).scalars())
            if not found:
                return 0
            # Seen again since it was found (another collector's commit on PostgreSQL):
            # the condition is checked again by the delete, and only the groups that
            # went take their rows with them.
            gone = []
            for f in found:
                deleted = conn.execute(text(
                    "DELETE FROM error_groups WHERE project_id = :p AND fingerprint = :f "
                    f"AND last_seen_us < :c AND {_NO_RECENT_MEMBER} RETURNING id"),
                    {"p": project_id, "f": f, "c": cutoff_us}).scalar()
                if deleted is None:
                    continue
                gone.append({"p": project_id, "f": f, "c": cutoff_us, "h": cutoff_s})
                # Its merged groups, as old, go in this sweep too; until then they are
                # listed on their own rather than in a group that is no more.
                conn.execute(text("UPDATE error_groups SET merged_into = NULL "
                                  "WHERE project_id = :p AND merged_into = :i"),
                             {"p": project_id, "i": deleted})
            if gone:
                for sql in (
                    "DELETE FROM error_events WHERE project_id = :p AND fingerprint = :f "
                    "AND ts_us < :c",
                    "DELETE FROM error_group_hourly WHERE project_id = :p "
                    "AND fingerprint = :f AND hour < :h",
                    "DELETE FROM error_group_facets WHERE project_id = :p "
                    "AND fingerprint = :f AND last_seen_us < :c",
                    "DELETE FROM error_status_changes WHERE project_id = :p "
                    "AND fingerprint = :f",
                ):
                    conn.execute(text(sql), gone)
            # A group seen again stays, and is not found by the next batch.
            self.outcome.groups += len(gone)
            return len(found)

        self._batches(batch)

    def _audit(self, cutoff_s: int) -> None:
        """Audit records older than `cutoff_s`, oldest first (by the index on at_us)."""
        key = "rowid" if self.sqlite else "id"
        statement = text(f"DELETE FROM audit_log WHERE {key} IN (SELECT {key} FROM audit_log "
                         "WHERE at_us < :c ORDER BY at_us LIMIT :n)")
        params = {"c": cutoff_s * US, "n": self.policy.batch_rows}
        self.outcome.add("audit_log", self._batches(
            lambda conn: int(conn.execute(statement, params).rowcount)))

    def _partitions(self) -> None:
        """PostgreSQL: whole day partitions older than every project's setting go
        first (storage/partitions.py); the row deletes then find only stragglers."""
        now_ns = self.now_s * NS
        with self.store.writer.begin() as conn:
            partitions.ensure_partitions(conn, now_ns)
            for signal, table in PARTITIONED_SIGNALS.items():
                longest = self.policy.longest(signal)
                if longest > 0 and partitions.is_partitioned(conn, table):
                    self.outcome.partitions += partitions.drop_partitions_before(
                        conn, table, now_ns - longest * NS)


def sweep(store: Store, policy: Policy, holder: str, now_s: int | None = None,
          stop: threading.Event | None = None) -> SweepReport:
    """One sweep over every project, if this holder gets the lease."""
    return Sweep(store, policy, holder, int(time.time()) if now_s is None else now_s,
                 stop).run()
