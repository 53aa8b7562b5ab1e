"""The outbox: a durable queue of request bodies an exporter has acknowledged and
still has to send upstream (exporters/forward). Rows are taken per (queue, signal)
in id order, deleted once sent, rescheduled when the upstream asks to wait.

Bodies are stored already encoded for the upstream (protobuf or JSON, gzipped or
not), so that sending is reading bytes and writing them to a socket."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, func, insert, select, update

from storage import schema
from storage.store import Store


@dataclass(frozen=True, slots=True)
class Entry:
    """One body to send: what an exporter enqueues."""

    signal: str
    body: bytes
    content_type: str
    content_encoding: str  # "" or "gzip"
    records: int


@dataclass(frozen=True, slots=True)
class Row:
    """One queued body, as taken to be sent."""

    id: int
    signal: str
    body: bytes
    content_type: str
    content_encoding: str
    records: int
    attempts: int
    next_attempt_us: int  # after a restart, the wait an upstream asked for still holds


@dataclass(frozen=True, slots=True)
class Backlog:
    rows: int
    records: int
    bytes: int


def _rows(queue: str, entries: Iterable[Entry], now_us: int) -> list[dict[str, object]]:
    return [{"queue": queue, "signal": e.signal, "body": e.body,
             "content_type": e.content_type, "content_encoding": e.content_encoding,
             "records": e.records, "size": len(e.body), "enqueued_us": now_us,
             "attempts": 0, "next_attempt_us": now_us} for e in entries]


def enqueue(store: Store, queue: str, entries: Iterable[Entry], now_us: int) -> int:
    """Insert every entry in one transaction; returns how many. Once this returns,
    the rows are committed."""
    return commit(store, queue, entries, (), now_us)


def commit(store: Store, queue: str, entries: Iterable[Entry], sent: Iterable[int],
           now_us: int) -> int:
    """Insert `entries` and delete the rows `sent`, in one transaction: the exporter's
    group commit, so that a busy queue costs one commit per round, not one per
    request and one per row sent. Returns how many rows were inserted."""
    rows = _rows(queue, entries, now_us)
    ids = list(sent)
    if not rows and not ids:
        return 0
    with store.writer.begin() as conn:
        if rows:
            conn.execute(insert(schema.outbox), rows)
        if ids:
            conn.execute(delete(schema.outbox).where(schema.outbox.c.id.in_(ids)))
    return len(rows)


def take(store: Store, queue: str, signal: str, limit: int = 1, after_id: int = 0
         ) -> list[Row]:
    """The oldest rows of one signal, in id order (whether due or not: the sender
    keeps one signal in order, so a row waiting to be retried holds those after it)."""
    o = schema.outbox
    query = (select(o.c.id, o.c.signal, o.c.body, o.c.content_type, o.c.content_encoding,
                    o.c.records, o.c.attempts, o.c.next_attempt_us)
             .where(o.c.queue == queue, o.c.signal == signal, o.c.id > after_id)
             .order_by(o.c.id).limit(limit))
    with store.reader.connect() as conn:
        return [Row(int(r.id), r.signal, bytes(r.body), r.content_type, r.content_encoding,
                    int(r.records), int(r.attempts), int(r.next_attempt_us))
                for r in conn.execute(query)]


def reschedule(store: Store, row_id: int, next_attempt_us: int) -> None:
    """Count one more failed attempt and note when the next one is due."""
    o = schema.outbox
    with store.writer.begin() as conn:
        conn.execute(update(o).where(o.c.id == row_id)
                     .values(attempts=o.c.attempts + 1, next_attempt_us=next_attempt_us))


def backlog(store: Store, queue: str) -> dict[str, Backlog]:
    """Rows, records and bytes waiting, per signal."""
    o = schema.outbox
    query = (select(o.c.signal, func.count(), func.coalesce(func.sum(o.c.records), 0),
                    func.coalesce(func.sum(o.c.size), 0))
             .where(o.c.queue == queue).group_by(o.c.signal))
    with store.reader.connect() as conn:
        return {signal: Backlog(int(n), int(records), int(size))
                for signal, n, records, size in conn.execute(query)}
