"""The wire form of a batch, built in the collector process for the writer process.

Plain tuples of plain values, in the order the writer binds them, with JSON
columns already serialised and span bodies already encoded: text and bytes pickle
and unpickle far cheaper than the dictionaries they came from. Kept apart from
storage/writer.py so that the writer process, which only unpickles these tuples,
does not import the record types and the OTLP protobuf modules (8 MB).
"""

from __future__ import annotations

import pickle
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from sounding.records import Batch, ErrorEvent, GroupDelta
from storage import spanbody, storable
from storage.jsontext import dumps
from storage.storable import Columns
from storage.writer import BatchWriter, WireBatch

# Where each table's columns sit in its wire row (the storage/writer.py order).
SPAN_COLUMNS = Columns(text=(3, 8, 9, 10, 11), max_len=((11, 16),), ints=(4, 5, 6, 7, 12),
                       int_format="iqqiq")
ERROR_COLUMNS = Columns(text=(0, 2, 3, 4), optional_text=(5, 6, 7, 8, 9, 10),
                        max_len=((0, 255), (9, 32), (10, 16)), ints=(1,), int_format="q")
DEPLOY_COLUMNS = Columns(text=(0,), optional_text=(1, 2, 3, 4),
                         max_len=((0, 128), (2, 200)), ints=(5,), int_format="q")
REQUEST_COLUMNS = Columns(text=(0, 1, 2, 3), max_len=((0, 200), (1, 200), (2, 16), (3, 500)),
                          ints=(4, 5), int_format="qq", finite=(6,))
GROUP_COLUMNS = Columns(text=(0, 1, 2), max_len=((0, 255),), ints=(3, 4, 5),
                        int_format="qqq")
REOPEN_COLUMNS = Columns(text=(0,), max_len=((0, 255),), ints=(1,), int_format="q")
_TABLE_COLUMNS = (SPAN_COLUMNS, ERROR_COLUMNS, DEPLOY_COLUMNS, REQUEST_COLUMNS, GROUP_COLUMNS,
                  REOPEN_COLUMNS)


def encode_batch(batch: Batch) -> WireBatch:
    """The batch as tuples of plain values, JSON columns already serialised, in the
    order the writer binds them. Text pickles and unpickles far cheaper than the
    dictionaries it came from, so this is also the cheapest form to hand over."""
    return encode_checked(batch)[0]


def encode_checked(batch: Batch) -> tuple[WireBatch, dict[str, int]]:
    """The wire batch, and how many records per signal were dropped because the
    store could not hold them (storage/storable.py). Checked per batch; only a
    batch that fails is encoded again record by record, so one bad record costs
    its batch a second encoding, never its neighbours their place in the store.

    Values that only Sounding's own stages touched were checked at the door: of
    those, only NUL is looked for (mended). After a plugin, every value is checked."""
    try:
        return _checked(_encode(batch), full=batch.unchecked), {}
    except Exception:  # noqa: BLE001 - whatever a processor put in: find it, drop it alone
        return _encode_each(batch)


def _encode(batch: Batch) -> WireBatch:
    project_id = batch.project_id
    # One resource is shared by many spans: serialised and hashed once per batch.
    resource_ids: dict[int, int] = {}
    resources = []
    spans = []
    fromhex = bytes.fromhex
    for s in batch.spans:
        resource = resource_ids.get(id(s.resource_attributes))
        if resource is None:
            text = dumps(s.resource_attributes)
            resource = resource_ids[id(s.resource_attributes)] = spanbody.resource_id(
                project_id, text)
            resources.append((resource, text))
        spans.append((fromhex(s.trace_id), fromhex(s.span_id), fromhex(s.parent_span_id),
                      s.name, s.kind, s.start_ns, s.end_ns, s.status_code, s.status_message,
                      s.service_name, s.scope_name, s.category or "custom", resource,
                      spanbody.encode(s)))
    errors = []
    for e in batch.errors:
        sc = e.source_context
        errors.append((e.fingerprint, e.ts_us, e.exception_class, e.message, dumps(e.backtrace),
                       None if e.params is None else dumps(e.params),
                       None if sc is None else dumps({
                           "file": sc.file, "lineno": sc.lineno, "context_line": sc.context_line,
                           "pre_context": sc.pre_context, "post_context": sc.post_context}),
                       e.request_id, e.user_id, e.trace_id, e.span_id))
    deploys = [(d.git_sha, d.version, d.env, d.deployer, d.description, d.ts_us)
               for d in batch.deploys]
    requests = [(r.service, r.env, r.method, r.route, r.ts_us, r.status, r.duration_ms)
                for r in batch.requests]
    return (project_id, spans, errors, deploys, requests, _group_rows(batch.groups.values()),
            list(batch.reopen_after.items()), resources)


def _group_rows(groups: Iterable[GroupDelta]) -> list[tuple[Any, ...]]:
    return [(g.fingerprint, g.exception_class, g.message, g.count, g.first_seen_us,
             g.last_seen_us, g.hourly) for g in groups]


def _checked(wire: WireBatch, full: bool = True) -> WireBatch:
    """`wire` with NUL in text mended; with `full`, Unstorable unless every value of
    every column is storable."""
    project_id, spans, errors, deploys, requests, groups, reopen, resources = wire
    tables = [spans, errors, deploys, requests, groups, reopen]
    look = storable.check if full else storable.has_nul
    for i, (rows, columns) in enumerate(zip(tables, _TABLE_COLUMNS, strict=True)):
        if look(rows, columns):
            tables[i] = [columns.repair(row) for row in rows]
    if full:  # the hourly counts of each group: hours and counts are BIGINT
        array("q", chain.from_iterable(chain(h.keys(), h.values()) for *_, h in groups))
    spans, errors, deploys, requests, groups, reopen = tables
    return project_id, spans, errors, deploys, requests, groups, reopen, resources


def _encode_each(batch: Batch) -> tuple[WireBatch, dict[str, int]]:
    """Each record encoded and checked as a batch of its own; what fails is dropped."""
    project_id = batch.project_id
    dropped: dict[str, int] = {}
    tables: list[list[tuple[Any, ...]]] = [[], [], [], []]
    resources: dict[int, str] = {}
    kept_errors: list[ErrorEvent] = []
    for signal, records in (("spans", batch.spans), ("errors", batch.errors),
                            ("deploys", batch.deploys), ("requests", batch.requests)):
        for record in records:
            alone = Batch(project_id)
            getattr(alone, signal).append(record)
            try:
                wire = _checked(_encode(alone))
            except Exception:  # noqa: BLE001 - this record alone cannot be stored
                dropped[signal] = dropped.get(signal, 0) + 1
                continue
            for table, rows in zip(tables, wire[1:5], strict=True):
                table.extend(rows)
            resources.update(wire[7])
            if isinstance(record, ErrorEvent):
                kept_errors.append(record)
    groups, reopen = _regroup(batch, kept_errors)
    spans, errors, deploys, requests = tables
    return ((project_id, spans, errors, deploys, requests, groups, reopen,
             list(resources.items())), dropped)


def _regroup(batch: Batch, kept: list[ErrorEvent]
             ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The group deltas and reopen candidates without the errors that were dropped:
    a group that lost errors is counted again from the errors kept (as the grouping
    processor counts), so no count or time of a dropped error stays behind."""
    recount: dict[Any, list[ErrorEvent]] = {}
    if len(kept) < len(batch.errors):
        recount = {e.fingerprint: [] for e in batch.errors}
        for error in kept:
            recount[error.fingerprint].append(error)
    groups, reopen = [], []
    for fingerprint, delta in batch.groups.items():
        mine = recount.get(fingerprint)
        if mine is not None:
            if not mine:
                continue  # every error of the group was dropped
            delta = _delta_of(fingerprint, mine)
        try:
            array("q", chain(delta.hourly.keys(), delta.hourly.values()))
            groups.extend(_checked_rows(_group_rows([delta]), GROUP_COLUMNS))
        except Exception:  # noqa: BLE001 - a group a processor made unstorable
            continue
    for fingerprint, ts_us in batch.reopen_after.items():
        mine = recount.get(fingerprint)
        if mine is not None:
            if not mine:
                continue
            ts_us = max(e.ts_us for e in mine)
        try:
            reopen.extend(_checked_rows([(fingerprint, ts_us)], REOPEN_COLUMNS))
        except Exception:  # noqa: BLE001
            continue
    return groups, reopen


def _delta_of(fingerprint: Any, errors: list[ErrorEvent]) -> GroupDelta:
    latest = max(errors, key=lambda e: e.ts_us)
    hourly: dict[int, int] = {}
    for error in errors:
        hour = error.ts_us // 3_600_000_000 * 3600  # processors/grouping.py's hour_of
        hourly[hour] = hourly.get(hour, 0) + 1
    return GroupDelta(fingerprint, latest.exception_class, latest.message, len(errors),
                      min(e.ts_us for e in errors), latest.ts_us, hourly)


def _checked_rows(rows: list[tuple[Any, ...]], columns: Columns) -> list[tuple[Any, ...]]:
    if storable.check(rows, columns):
        return [columns.repair(row) for row in rows]
    return rows


@dataclass(slots=True)
class EncodedBatch:
    """A wire batch already pickled, as the exporter hands it to the writer process.
    Built by the event loop, or by a decode worker (sounding/offload.py), in which
    case the event loop passes it on without unpickling it."""

    payload: bytes
    records: int  # records in the batch, for the queue's bound
    counts: dict[str, int]  # records per signal, for the accepted/refused counters
    size: int  # bytes of the request body, for the queue's bound
    empty: bool  # nothing to write: no record and nothing derived
    # Records per signal dropped because the store could not hold them; counted by
    # the exporter on the event loop (decode workers keep no metrics).
    unencodable: dict[str, int] = field(default_factory=dict)


def encode(batch: Batch) -> EncodedBatch:
    wire, unencodable = encode_checked(batch)
    counts = wire_records(wire)
    return EncodedBatch(pickle.dumps(wire, protocol=pickle.HIGHEST_PROTOCOL),
                        batch.record_count(), counts, max(batch.approx_bytes, 0),
                        not any(counts.values()) and not wire[5] and not wire[6],
                        unencodable)


def wire_records(wire: WireBatch) -> dict[str, int]:
    """Records per signal in a wire batch, for the accepted/refused counters."""
    return {"spans": len(wire[1]), "errors": len(wire[2]), "deploys": len(wire[3]),
            "requests": len(wire[4])}


def write_batches(conn: Any, batches: Sequence[Batch], received_us: int) -> None:
    """Write record batches inside an open SQLAlchemy transaction (tools and tests)."""
    cursor = conn.connection.cursor()
    try:
        BatchWriter(conn.dialect.name).write(cursor, [encode_batch(b) for b in batches],
                                             received_us)
    finally:
        cursor.close()


def prepare(batch: Batch, settings: dict[str, Any]) -> EncodedBatch:
    """The SQL exporter's preparation (exporters/sql.py), run in a decode worker
    (sounding/offload.py): the batch encoded and pickled there, off the event loop."""
    return encode(batch)
