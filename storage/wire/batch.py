"""The wire form of a batch, built in the collector process for the writer process.

A `WireBatch` (storage/rows.py) of rows: plain tuples of plain values, built by
name through each row form's `row`, with JSON columns already serialised and span
bodies already encoded: text and bytes pickle and unpickle far cheaper than the
dictionaries they came from. Kept apart from storage/writer/commit.py so that the writer
process, which only unpickles these tuples, does not import the record types and
the OTLP protobuf modules (8 MB).
"""

from __future__ import annotations

import hashlib
import pickle
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from model.otlp_values import any_value
from model.policy import DEFAULT
from model.records import Batch, ErrorEvent, LogRecord, SessionCount
from storage import logbody, rows, spanbody
from storage.jsontext import dumps_column
from storage.rows import Row, WireBatch
from storage.wire import storable
from storage.wire.points import encode_metrics
from storage.wire.resources import ResourceRows
from storage.wire.storable import Columns
from storage.writer.commit import BatchWriter
from storage.writer.group_deltas import group_rows, recount, reopen_rows
from storage.writer.rollups import buckets_json

# What each list of a wire batch is checked for, derived from its row form.
_CHECKS = {name: Columns.of(form) for name, form in rows.WIRE_FORMS.items()}
GROUP_COLUMNS, REOPEN_COLUMNS = _CHECKS["groups"], _CHECKS["reopen"]
# Named alike in Batch and WireBatch.
_SIGNALS = ("spans", "errors", "deploys", "requests", "logs", "metrics", "sessions",
            "feedback", "check_ins")
_HOURLY = rows.GROUPS.getter("hourly")
# A level is a short word (fatal, error, warning, info, debug), but the Sentry door
# refuses nothing: one longer than its column is cut here rather than fail the commit.
LEVEL_LENGTH = rows.ERROR_EVENTS.column("level").length


def encode_batch(batch: Batch) -> WireBatch:
    """The batch as tuples of plain values, JSON columns already serialised, in the
    order the writer binds them. Text pickles and unpickles far cheaper than the
    dictionaries it came from, so this is also the cheapest form to hand over."""
    return encode_checked(batch)[0]


def encode_checked(batch: Batch) -> tuple[WireBatch, dict[str, int]]:
    """The wire batch, and how many records per signal were dropped because the
    store could not hold them (storage/wire/storable.py). Checked per batch; only a
    batch that fails is encoded again record by record, so one bad record costs
    its batch a second encoding, never its neighbours their place in the store.

    Every value of every list is checked, whichever door and processors the batch
    came through: this is the one place that stands between a record and the writer,
    so no door can skip it (a door's own limits are for its clients' 400s)."""
    try:
        return _checked(_encode(batch)), {}
    except Exception:  # noqa: BLE001 - whatever a processor put in: find it, drop it alone
        return _encode_each(batch)


def _encode(batch: Batch) -> WireBatch:
    project_id = batch.project_id
    # One resource is shared by many spans and log records: serialised and hashed
    # once per batch.
    resources = ResourceRows(project_id)
    resource_ids = resources.ids
    spans = []
    fromhex = bytes.fromhex
    span_row = rows.SPANS.row
    for s in batch.spans:
        resource = resource_ids.get(id(s.resource_attributes))
        if resource is None:
            resource = resources.add(s.resource_attributes)
        spans.append(span_row(
            trace_id=fromhex(s.trace_id), span_id=fromhex(s.span_id),
            parent_span_id=fromhex(s.parent_span_id), name=s.name, kind=s.kind,
            start_ns=s.start_ns, end_ns=s.end_ns, status_code=s.status_code,
            status_message=s.status_message, service_name=s.service_name,
            scope_name=s.scope_name, category=s.category or "custom", resource_id=resource,
            body=spanbody.encode(s)))
    logs = _log_rows(batch.logs, resources)
    errors = []
    error_row = rows.ERROR_EVENTS.row
    for e in batch.errors:
        sc = e.source_context
        errors.append(error_row(
            fingerprint=e.fingerprint, ts_us=e.ts_us, exception_class=e.exception_class,
            message=e.message, backtrace=dumps_column(e.backtrace),
            params=None if e.params is None else dumps_column(e.params),
            source_context=None if sc is None else dumps_column({
                "file": sc.file, "lineno": sc.lineno, "context_line": sc.context_line,
                "pre_context": sc.pre_context, "post_context": sc.post_context}),
            request_id=e.request_id, user_id=e.user_id, trace_id=e.trace_id,
            span_id=e.span_id, service=e.service, environment=e.environment,
            release=e.release, log_time_ns=e.log_time_ns, occurrence_key=e.occurrence_key,
            tags=dumps_column(e.tags) if e.tags else None,
            level=e.level[:LEVEL_LENGTH] if e.level else None,
            exceptions=None if e.exceptions is None else dumps_column(e.exceptions),
            context=None if e.context is None else dumps_column(e.context, by_parts=True)))
    deploy_row, request_row = rows.DEPLOYS.row, rows.REQUESTS.row
    deploys = [deploy_row(git_sha=d.git_sha, version=d.version, env=d.env, deployer=d.deployer,
                          description=d.description, ts_us=d.ts_us, service=d.service)
               for d in batch.deploys]
    requests = [request_row(service=r.service, env=r.env, method=r.method, route=r.route,
                            ts_us=r.ts_us, status=r.status, duration_ms=r.duration_ms)
                for r in batch.requests]
    series, metrics, exemplars = (encode_metrics(batch.metrics, resources)
                                  if batch.metrics else ([], [], []))
    feedback_row = rows.FEEDBACK.row
    feedback = [feedback_row(
        feedback_id=f.feedback_id, associated_event_id=f.associated_event_id, source=f.source,
        name=f.name, email=f.email, message=f.message, url=f.url, release=f.release,
        environment=f.environment, ts_us=f.ts_us) for f in batch.feedback]
    check_in_row = rows.CHECK_INS.row
    check_ins = [check_in_row(
        check_in_id=c.check_in_id, monitor_slug=c.monitor_slug, status=c.status,
        duration_s=c.duration_s, environment=c.environment, release=c.release,
        trace_id=c.trace_id,
        monitor_config=None if c.monitor_config is None else dumps_column(c.monitor_config),
        latest=int(c.latest), ts_us=c.ts_us,
        finished_us=None if c.status == "in_progress" else c.ts_us)
        for c in batch.check_ins]
    return rows.wire_batch(project_id=project_id, spans=spans, errors=errors, deploys=deploys,
                           requests=requests, groups=group_rows(batch.groups.values()),
                           reopen=reopen_rows(batch.reopen_after.items()),
                           resources=resources.rows, logs=logs,
                           metric_series=series, metrics=metrics,
                           metric_exemplars=exemplars,
                           sessions=session_rows(batch.sessions) if batch.sessions else [],
                           feedback=feedback, check_ins=check_ins,
                           **_derived_rollups(batch))


def session_rows(counts: list[SessionCount]) -> list[Row]:
    """Session counts as wire rows; the distinct id hashed (rows.SESSIONS)."""
    session_row, digest = rows.SESSIONS.row, hashlib.blake2b
    keys: dict[str, bytes] = {"": b""}
    out = []
    for c in counts:
        user_key = keys.get(c.user)
        if user_key is None:
            user_key = keys[c.user] = digest(c.user.encode("utf-8", "surrogatepass"),
                                             digest_size=16).digest()
        out.append(session_row(
            mark=c.mark, release=c.release, environment=c.environment, minute=c.started_s,
            user_key=user_key, started=c.started, exited=c.exited, errored=c.errored,
            crashed=c.crashed, abnormal=c.abnormal))
    return out


def _rollup_rows(rollups: dict[tuple[Any, ...], list[Any]]) -> list[Row]:
    """A processor's folded rollups (model/operations.py) as wire rows: the key, the
    counts, the buckets as the JSON the rollup rows hold."""
    return [(*key, c, e, s, buckets_json(b)) for key, (c, e, s, b) in rollups.items()]


def _derived_rollups(batch: Batch) -> dict[str, list[Row]]:
    """The operation and edge rollups, call halves and detectors' facts the
    processors derived (with the project's detector settings when there are facts)."""
    facts = batch.trace_facts
    return {"operations": _rollup_rows(batch.operations),
            "edges": _rollup_rows(batch.edges), "links": list(batch.links),
            "trace_facts": list(facts),
            "detectors": [(dumps_column((batch.policy or DEFAULT).detectors.as_row()),)]
            if facts else []}


def _log_rows(records: list[LogRecord], resources: ResourceRows) -> list[Row]:
    out = []
    fromhex = bytes.fromhex
    log_row = rows.LOGS.row
    encode_body, as_text, key_of = logbody.encode, logbody.body_text, logbody.record_key
    # What the record key hashes before the record: once per (resource, scope).
    prefixes: dict[tuple[int, str], bytes] = {}
    resource_ids = resources.ids
    for r in records:
        resource = resource_ids.get(id(r.resource_attributes))
        if resource is None:
            resource = resources.add(r.resource_attributes)
        scope = r.scope_name
        prefix = prefixes.get((resource, scope))
        if prefix is None:
            prefix = prefixes[(resource, scope)] = logbody.key_prefix(resource, scope)
        body = encode_body(r)
        message = r.otlp
        if message is not None and r.untouched:
            # Read from the message without keeping the value on the record, which
            # would make the next exporter's preparation think a stage touched it.
            value = any_value(message.body) if message.HasField("body") else None
        else:
            value = r.body
        out.append(log_row(
            record_key=key_of(prefix, body), time_ns=r.time_ns or r.observed_ns,
            observed_ns=r.observed_ns, severity_number=r.severity_number,
            severity_text=r.severity_text,
            trace_id=fromhex(r.trace_id), span_id=fromhex(r.span_id), flags=r.flags,
            event_name=r.event_name, service_name=r.service_name, scope_name=scope,
            resource_id=resource, body_text=as_text(value), body=body))
    return out


def _checked(wire: WireBatch) -> WireBatch:
    """`wire` with NUL in text mended; Unstorable unless every value of every column
    is storable."""
    mended: dict[str, list[Row]] = {}
    for (name, columns), table in zip(_CHECKS.items(), wire[1:], strict=True):
        # Most of a small batch's 18 lists are empty: skipped without a call.
        if table and storable.check(table, columns):
            mended[name] = [columns.repair(row) for row in table]
    # The hourly counts of each group: hours and counts are BIGINT.
    array("q", chain.from_iterable(chain(h.keys(), h.values())
                                   for h in map(_HOURLY, wire.groups)))
    return wire._replace(**mended) if mended else wire  # type: ignore[arg-type]  # lists


def _encode_each(batch: Batch) -> tuple[WireBatch, dict[str, int]]:
    """Each record encoded and checked as a batch of its own; what fails is dropped."""
    project_id = batch.project_id
    dropped: dict[str, int] = {}
    kept: dict[str, list[Row]] = {signal: [] for signal in _SIGNALS}
    resources: dict[Row, None] = {}  # a set that keeps its order
    series: dict[Row, None] = {}
    exemplars: list[Row] = []
    kept_errors: list[ErrorEvent] = []
    for signal in _SIGNALS:
        for record in getattr(batch, signal):
            alone = Batch(project_id)
            getattr(alone, signal).append(record)
            try:
                wire = _checked(_encode(alone))
            except Exception:  # noqa: BLE001 - this record alone cannot be stored
                dropped[signal] = dropped.get(signal, 0) + 1
                continue
            for name, table in kept.items():
                table.extend(getattr(wire, name))
            resources.update(dict.fromkeys(wire.resources))
            series.update(dict.fromkeys(wire.metric_series))
            exemplars.extend(wire.metric_exemplars)
            if isinstance(record, ErrorEvent):
                kept_errors.append(record)
    groups, reopen = _regroup(batch, kept_errors)
    # Derived from every span, the dropped ones too (a count, not a stored row): each
    # row checked alone, as a group's is.
    derived = {name: [kept for row in table for kept in _storable(row, _CHECKS[name])]
               for name, table in _derived_rollups(batch).items()}
    return rows.wire_batch(project_id=project_id, **kept, groups=groups, reopen=reopen,
                           resources=list(resources), metric_series=list(series),
                           metric_exemplars=exemplars, **derived), dropped


def _regroup(batch: Batch, kept: list[ErrorEvent]) -> tuple[list[Row], list[Row]]:
    """The group deltas and reopen candidates without the errors that were dropped
    (storage/writer/group_deltas.recount), each checked alone: a group a processor made
    unstorable is left out."""
    groups = group_rows(batch.groups.values())
    reopen = reopen_rows(batch.reopen_after.items())
    if len(kept) < len(batch.errors):
        groups, reopen = recount(groups, reopen, {e.fingerprint for e in batch.errors},
                                 [(e.fingerprint, e.ts_us, e.exception_class, e.message)
                                  for e in kept])
    return ([kept for row in groups for kept in _storable(row, GROUP_COLUMNS, hourly=True)],
            [kept for row in reopen for kept in _storable(row, REOPEN_COLUMNS)])


def _storable(row: Row, columns: Columns, hourly: bool = False) -> list[Row]:
    """[`row`], mended, or [] when a processor made it unstorable."""
    try:
        if hourly:  # hours and counts are BIGINT
            counts = _HOURLY(row)
            array("q", chain(counts.keys(), counts.values()))
        return _checked_rows([row], columns)
    except Exception:  # noqa: BLE001 - a value a processor made unstorable
        return []


def _checked_rows(table: list[Row], columns: Columns) -> list[Row]:
    if storable.check(table, columns):
        return [columns.repair(row) for row in table]
    return table


@dataclass(slots=True)
class EncodedBatch:
    """A wire batch already pickled, as the exporter hands it to the writer process.
    Built by the event loop, or by a decode worker (runtime/offload.py), in which
    case the event loop passes it on without unpickling it."""

    payload: bytes
    records: int  # records in the batch, for the queue's bound
    counts: dict[str, int]  # records per signal, for the accepted/refused counters
    size: int  # bytes of the request body, for the queue's bound
    empty: bool  # nothing to write: no record and nothing derived
    # Records per signal dropped because the store could not hold them; counted by
    # the exporter on the event loop (decode workers keep no metrics).
    unencodable: dict[str, int] = field(default_factory=dict)
    project_id: int = 0  # whose usage counts the unencodable records as dropped


def encode(batch: Batch) -> EncodedBatch:
    wire, unencodable = encode_checked(batch)
    counts = wire_records(wire)
    # Pickled as a plain tuple: a named tuple pickles through Python code on both
    # sides (3 µs a batch, a tenth of a lone error's cost); BatchWriter.write names it
    # again in the writer process.
    return EncodedBatch(pickle.dumps(tuple(wire), protocol=pickle.HIGHEST_PROTOCOL),
                        batch.record_count(), counts, max(batch.approx_bytes, 0),
                        not any(counts.values()) and not wire.groups and not wire.reopen,
                        unencodable, batch.project_id)


def wire_records(wire: WireBatch) -> dict[str, int]:
    """Records per signal in a wire batch, for the accepted/refused counters."""
    return {"spans": len(wire.spans), "errors": len(wire.errors),
            "deploys": len(wire.deploys), "requests": len(wire.requests),
            "logs": len(wire.logs), "metrics": len(wire.metrics),
            "sessions": len(wire.sessions), "feedback": len(wire.feedback),
            "check_ins": len(wire.check_ins)}


def write_batches(conn: Any, batches: Sequence[Batch], received_us: int) -> None:
    """Write record batches inside an open SQLAlchemy transaction (tools and tests)."""
    cursor = conn.connection.cursor()
    try:
        BatchWriter(conn.dialect.name).write(cursor, [encode_batch(b) for b in batches],
                                             received_us)
    finally:
        cursor.close()


def prepare(batch: Batch, settings: dict[str, Any]) -> EncodedBatch:
    """The SQL exporter's preparation (exporters/sql/exporter.py), run in a decode worker
    (runtime/offload.py): the batch encoded and pickled there, off the event loop."""
    return encode(batch)
