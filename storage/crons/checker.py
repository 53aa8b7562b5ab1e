"""The cron checker: the one owner of every monitor's state. Each turn (the crons
extension runs one every `check_every_s`, extensions/crons/) it

1. applies the check-ins not applied yet (`processed = 0`: new rows, and runs a
   later check-in finished, storage/writer/checkins.py), in the order they came: a
   check-in makes or reconfigures its monitor (`monitor_config`), moves the next
   expected time on (from its minute, as Sentry does), and counts an ok as a
   success and an error as a failure;
2. times out the runs in progress past their monitor's `max_runtime` (a failure);
3. records a `missed` check-in for each monitor whose next expected check-in is
   past its margin (a failure), then expects the next one; a monitor whose
   deadlines all passed while no collector ran gets one missed check-in for the
   outage, not one per expected time.

`failure_threshold` failures in a row open an incident, `recovery_threshold`
successes in a row resolve it. An incident alerts once per kind of failure
(`cron_failed` for errors and timeouts, `cron_missed` for missed check-ins) and
once when it resolves (`cron_recovered`): alert facts (storage/alerts/outbox.py)
written in the transaction of the change.

Exactly once across collectors on one database: a turn holds the lease
`cron_checker` (storage/retention/leases.py) and renews it in every transaction
it writes in, so a checker whose lease was taken over stops at its next
transaction; and each incident is unique per (monitor, the check-in that opened
it), each missed check-in's id is derived from (monitor, expected time), each
fact's dedupe key from (kind, incident): were two checkers ever to run one turn,
the second would store none of them again.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from sqlalchemy import JSON, Float, and_, bindparam, delete, func, select, update

from model import cron
from model.cron import MonitorConfig
from model.timeutil import now_us as clock
from storage import schema, upsert
from storage.crons.monitors import Monitor, ensure, monitor_of
from storage.retention import leases
from storage.store import Store
from storage.writer.alert_facts import dedupe_key as stored_key

log = logging.getLogger(__name__)

LEASE = "cron_checker"
LEASE_S = 30  # renewed every turn: a checker that died frees it this late
BATCH = 200  # check-ins or monitors per transaction: a short hold of the write lock
US = 1_000_000
_C, _M, _I = schema.cron_checkins, schema.cron_monitors, schema.cron_incidents
_F, _P = schema.alert_facts, schema.projects
FAILED, MISSED, RECOVERED = "cron_failed", "cron_missed", "cron_recovered"
# Built once and run with parameters (many rows a turn): a statement built per row
# costs more than its execution on SQLite.
# A duration is only ever filled in (a run finished in the same turn keeps its own).
# Marked only while the row holds the status the turn read ("s"): on PostgreSQL the
# writer may finish the run (in_progress to ok or error, processed back to 0) between
# the turn's read and this mark, and marking that row would lose its error or ok.
# Left unmarked, the next turn applies it.
_PROCESSED = update(_C).where(_C.c.project_id == bindparam("p"),
                              _C.c.check_in_id == bindparam("i"),
                              _C.c.status == bindparam("s")).values(
    processed=1, duration_s=func.coalesce(bindparam("d", type_=Float), _C.c.duration_s))
_STATE = update(_M).where(_M.c.id == bindparam("m")).values(
    status=bindparam("s"), next_expected_us=bindparam("n"), last_checkin_us=bindparam("l"),
    failures=bindparam("f"), successes=bindparam("k"), incident_id=bindparam("x"),
    updated_us=bindparam("u"))


class LeaseLost(Exception):
    """Another collector holds the checker's lease: stop this turn."""


@dataclass
class Report:
    held: bool = False  # False: another collector is the checker
    applied: int = 0  # check-ins applied to their monitors
    timeouts: int = 0
    missed: int = 0
    opened: int = 0  # incidents
    resolved: int = 0
    facts: list[str] = field(default_factory=list)  # kinds of the alert facts recorded


@dataclass
class _State:
    """A monitor's state while a transaction changes it; written back by `flush`."""

    monitor: Monitor
    config: MonitorConfig | None
    status: str | None
    next_expected_us: int | None
    last_checkin_us: int | None
    failures: int
    successes: int
    incident_id: int | None

    @classmethod
    def of(cls, m: Monitor) -> _State:
        return cls(m, m.config, m.status, m.next_expected_us, m.last_checkin_us, m.failures,
                   m.successes, m.incident_id)

    def params(self, now_us: int) -> dict[str, Any]:
        return {"m": self.monitor.id, "s": self.status, "n": self.next_expected_us,
                "l": self.last_checkin_us, "f": self.failures, "k": self.successes,
                "x": self.incident_id, "u": now_us}


def _flush(conn: Any, states: Any, now_us: int) -> None:
    """Write the states back, in one statement run once per monitor."""
    params = [state.params(now_us) for state in states]
    if params:
        conn.execute(_STATE, params)


def _states(conn: Any, keys: set[tuple[int, str]]) -> dict[tuple[int, str], _State]:
    """The states of the monitors `keys` (project id, slug) that exist."""
    projects, slugs = {p for p, _ in keys}, sorted({s for _, s in keys})
    found = conn.execute(select(_M).where(_M.c.project_id.in_(projects), _M.c.slug.in_(slugs)))
    states = {}
    for row in found:
        key = (int(row.project_id), row.slug)
        if key in keys:
            states[key] = _State.of(monitor_of(row))
    return states


def minute_of(ts_us: int) -> int:
    return ts_us // cron.MINUTE_US * cron.MINUTE_US


def missed_id(monitor_id: int, expected_us: int) -> str:
    """The id of the missed check-in of `monitor_id` at `expected_us`: the same on
    every collector, so that it is stored once."""
    return hashlib.blake2b(f"missed:{monitor_id}:{expected_us}".encode(),
                           digest_size=16).hexdigest()


class Checker:
    def __init__(self, store: Store, holder: str, batch: int = BATCH) -> None:
        self.store = store
        self.holder = holder
        self.batch = batch
        self._names: dict[int, str] = {}
        dialect = store.dialect
        # Built once, run with parameters (see _PROCESSED).
        self._missed_sql = upsert.insert(dialect, _C).values(
            project_id=bindparam("p"), check_in_id=bindparam("i"), monitor_slug=bindparam("g"),
            status="missed", latest=0, ts_us=bindparam("t"), finished_us=bindparam("t"),
            received_us=bindparam("r"), processed=1, expected_us=bindparam("t"),
        ).on_conflict_do_nothing(index_elements=["project_id", "check_in_id"]).returning(
            _C.c.check_in_id)
        self._incident_sql = upsert.insert(dialect, _I).values(
            project_id=bindparam("p"), monitor_id=bindparam("m"), reason=bindparam("w"),
            opened_by=bindparam("b"), opened_us=bindparam("t"),
        ).on_conflict_do_nothing(index_elements=["monitor_id", "opened_by"]).returning(_I.c.id)
        self._fact_sql = upsert.insert(dialect, _F).values(
            project_id=bindparam("p"), kind=bindparam("k"), subject=bindparam("g"),
            dedupe_key=bindparam("d"), at_us=bindparam("t"), details=bindparam("j", type_=JSON),
            created_us=bindparam("t"),
        ).on_conflict_do_nothing(index_elements=["project_id", "dedupe_key"]).returning(_F.c.id)

    def run(self, now_us: int | None = None) -> Report:
        """One turn, if this holder gets the lease; blocking (a thread's work). A
        turn with little to do is one transaction (one commit: what an idle turn
        costs is mostly that); a step that fills its batch goes on in transactions
        of its own, each renewing the lease, before the next step starts."""
        now = clock() if now_us is None else now_us
        report = Report()
        steps = (self._apply, self._timeouts, self._missed)
        at = 0
        with self._begin() as conn:
            if not leases.take_in(conn, LEASE, self.holder, self._wall(), LEASE_S * US):
                return report
            report.held = True
            while at < len(steps) and steps[at](conn, now, report) < self.batch:
                at += 1
        try:
            while at < len(steps):
                with self._begin() as conn:
                    self._renew(conn)
                    if steps[at](conn, now, report) < self.batch:
                        at += 1
        except LeaseLost:
            log.warning("crons: another collector took the checker over")
            report.held = False
        return report

    def release(self) -> None:
        """Let another collector be the checker at once (at shutdown)."""
        leases.release(self.store, LEASE, self.holder)

    @staticmethod
    def _wall() -> int:
        # The lease runs on the wall clock, whatever `now` the turn judges by.
        return int(time.time() * US)

    def _begin(self) -> Any:
        return self.store.writer.begin()

    def _renew(self, conn: Any) -> None:
        if not leases.renew(conn, LEASE, self.holder, self._wall(), LEASE_S * US):
            raise LeaseLost

    # 1. Check-ins.

    def _apply(self, conn: Any, now: int, report: Report) -> int:
        found = list(conn.execute(
            select(_C).where(_C.c.processed == 0)
            .order_by(_C.c.ts_us, _C.c.project_id, _C.c.check_in_id).limit(self.batch)))
        if not found:
            return 0
        states = _states(conn, {(int(row.project_id), row.monitor_slug) for row in found})
        done: list[dict[str, Any]] = []
        for row in found:
            key = (int(row.project_id), row.monitor_slug)
            config = _config(row.monitor_config)
            state = states.get(key)
            # The SDKs send the configuration with every check-in: written only when
            # it makes the monitor or changes it.
            if state is None or (config is not None and config != state.config):
                monitor = ensure(conn, self.store.dialect, key[0], key[1], config, now)
                if state is None:
                    state = states[key] = _State.of(monitor)
                state.monitor, state.config = monitor, monitor.config
            finished = self._check_in(conn, state, row, now, report)
            if finished is not None:
                done.append(finished)
            report.applied += 1
        if done:
            conn.execute(_PROCESSED, done)
        _flush(conn, states.values(), now)
        return len(found)

    def _check_in(self, conn: Any, state: _State, row: Any, now: int, report: Report
                  ) -> dict[str, Any] | None:
        """Apply one check-in to its monitor's state; the row's processed mark to
        write (None: written already)."""
        status, started_us = row.status, int(row.ts_us)
        duration = row.duration_s
        key = _C.c.project_id == row.project_id
        finished: dict[str, Any] | None = {"p": row.project_id, "i": row.check_in_id,
                                           "d": row.duration_s, "s": row.status}
        if status != "in_progress" and row.latest:
            # No id (curl) or Sentry's zero id: it finishes the latest run in progress.
            run = conn.execute(select(_C).where(
                key, _C.c.monitor_slug == row.monitor_slug, _C.c.status == "in_progress",
                _C.c.check_in_id != row.check_in_id, _C.c.ts_us <= row.ts_us)
                .order_by(_C.c.ts_us.desc()).limit(1)).first()
            if run is not None:
                started_us = int(run.ts_us)
                if duration is None:
                    duration = (int(row.ts_us) - started_us) / US
                conn.execute(update(_C).where(key, _C.c.check_in_id == run.check_in_id).values(
                    status=status, duration_s=duration, finished_us=row.ts_us, processed=1))
                conn.execute(delete(_C).where(key, _C.c.check_in_id == row.check_in_id))
                row, finished = run, None
        if (finished is not None and status != "in_progress" and duration is None
                and row.finished_us is not None):
            # A run finished by its id without a duration: from its two check-ins.
            finished["d"] = max(0, int(row.finished_us) - started_us) / US
        # Its arrival: the next check-in is expected from this one's minute on.
        if state.config is not None:
            expected = cron.next_expected(state.config, minute_of(started_us))
            if state.next_expected_us is None or expected > state.next_expected_us:
                state.next_expected_us = expected
        state.last_checkin_us = max(state.last_checkin_us or 0, started_us)
        environment = row.environment
        if status == "in_progress":
            state.status = "in_progress"
        elif status == "ok":
            self._success(conn, state, now, report, environment)
        else:
            self._failure(conn, state, "error", row.check_in_id, now, report, environment)
        return finished

    # 2. Timeouts.

    def _timeouts(self, conn: Any, now: int, report: Report) -> int:
        join = and_(_M.c.project_id == _C.c.project_id, _M.c.slug == _C.c.monitor_slug)
        found = list(conn.execute(
            select(_C.c.check_in_id.label("run_id"), _C.c.ts_us.label("run_ts_us"),
                   _C.c.environment.label("run_environment"), _M)
            .select_from(_C.join(_M, join))
            .where(_C.c.status == "in_progress", _C.c.processed == 1,
                   _C.c.ts_us < now - cron.MINUTE_US,
                   _C.c.ts_us + _M.c.max_runtime * cron.MINUTE_US < now)
            .order_by(_C.c.ts_us).limit(self.batch)))
        for row in found:
            changed = conn.execute(update(_C).where(
                _C.c.project_id == row.project_id, _C.c.check_in_id == row.run_id,
                _C.c.status == "in_progress").values(
                status="timeout", finished_us=now,
                duration_s=(now - int(row.run_ts_us)) / US)).rowcount
            if not changed:
                continue
            state = _State.of(monitor_of(row))
            self._failure(conn, state, "timeout", row.run_id, now, report,
                          row.run_environment)
            _flush(conn, [state], now)
            report.timeouts += 1
        return len(found)

    # 3. Missed check-ins.

    def _missed(self, conn: Any, now: int, report: Report) -> int:
        # A check-in committed since this turn applied them (PostgreSQL reads what
        # other transactions committed meanwhile) is no missed one: its monitor waits.
        waiting = (select(_C.c.check_in_id).where(
            _C.c.processed == 0, _C.c.project_id == _M.c.project_id,
            _C.c.monitor_slug == _M.c.slug).exists())
        due = list(conn.execute(
            select(_M).where(_M.c.next_expected_us < now,
                             _M.c.next_expected_us + _M.c.checkin_margin * cron.MINUTE_US
                             < now, ~waiting)
            .order_by(_M.c.next_expected_us, _M.c.id).limit(self.batch)))
        changed: list[_State] = []
        for row in due:
            state = _State.of(monitor_of(row))
            if state.config is None or state.next_expected_us is None:
                continue
            expected = state.next_expected_us
            check_in_id = missed_id(state.monitor.id, expected)
            stored = conn.execute(self._missed_sql, {
                "p": state.monitor.project_id, "i": check_in_id, "g": state.monitor.slug,
                "t": expected, "r": now}).first()
            if stored is not None:
                report.missed += 1
                self._failure(conn, state, "missed", check_in_id, now, report, None,
                              expected_us=expected)
            margin = state.config.checkin_margin * cron.MINUTE_US
            following = cron.next_expected(state.config, expected)
            if following + margin < now:  # an outage: expect the next one from now
                following = cron.next_expected(state.config, minute_of(now - margin))
            state.next_expected_us = following
            state.status = "missed"
            changed.append(state)
        _flush(conn, changed, now)
        return len(due)

    # Incidents.

    def _failure(self, conn: Any, state: _State, reason: str, check_in_id: str, now: int,
                 report: Report, environment: str | None, expected_us: int | None = None
                 ) -> None:
        m = state.monitor
        state.failures += 1
        state.successes = 0
        state.status = reason
        threshold = state.config.failure_issue_threshold if state.config else 1
        if state.incident_id is None and state.failures >= threshold:
            opened = conn.execute(self._incident_sql, {
                "p": m.project_id, "m": m.id, "w": reason, "b": check_in_id, "t": now}).first()
            if opened is not None:
                report.opened += 1
                state.incident_id = int(opened.id)
            else:  # opened by a checker before us (see the module's docstring)
                state.incident_id = conn.execute(select(_I.c.id).where(
                    _I.c.monitor_id == m.id, _I.c.opened_by == check_in_id)).scalar_one()
        if state.incident_id is not None:
            kind = MISSED if reason == "missed" else FAILED
            self._fact(conn, kind, state, now, report, {
                "reason": reason, "check_in_id": check_in_id, "environment": environment,
                "failures": state.failures, "expected_us": expected_us})

    def _success(self, conn: Any, state: _State, now: int, report: Report,
                 environment: str | None) -> None:
        state.successes += 1
        state.failures = 0
        state.status = "ok"
        threshold = state.config.recovery_threshold if state.config else 1
        if state.incident_id is None or state.successes < threshold:
            return
        resolved = conn.execute(update(_I).where(
            _I.c.id == state.incident_id, _I.c.resolved_us.is_(None)).values(
            resolved_us=now)).rowcount
        if resolved:
            report.resolved += 1
            self._fact(conn, RECOVERED, state, now, report,
                       {"environment": environment, "successes": state.successes})
        state.incident_id = None

    def _fact(self, conn: Any, kind: str, state: _State, now: int, report: Report,
              details: dict[str, Any]) -> None:
        m = state.monitor
        name = self._project_name(conn, m.project_id)
        stored = conn.execute(self._fact_sql, {
            "p": m.project_id, "k": kind, "g": m.slug,
            "d": stored_key(f"{kind}:{m.id}:{state.incident_id}"), "t": now,
            "j": {"monitor": m.slug, "monitor_id": m.id, "incident_id": state.incident_id,
                  "schedule": state.config.describe() if state.config else None,
                  "path": f"/projects/{quote(name, safe='')}/crons/{quote(m.slug)}",
                  **details}}).first()
        if stored is not None:
            report.facts.append(kind)

    def _project_name(self, conn: Any, project_id: int) -> str:
        name = self._names.get(project_id)
        if name is None:
            name = self._names[project_id] = str(conn.execute(
                select(_P.c.name).where(_P.c.id == project_id)).scalar_one())
        return name


def _config(value: Any) -> MonitorConfig | None:
    """A stored check-in's `monitor_config` (checked by the door; a row that is not
    one, written by hand, configures nothing)."""
    if not isinstance(value, dict):
        return None
    try:
        return MonitorConfig(**value)
    except TypeError:
        return None

