"""The alert facts a group commit makes: a `new_group` fact for each group its upsert
inserted, a `regression` fact for each resolved group it reopened
(storage/writer/groups.py tells which), inserted in the commit's own transaction.
So a crash at any moment leaves a fact exactly when its group change committed,
and the alert sender (extensions/alerts) delivers it from the table.

Of two collectors writing the same new group at once on PostgreSQL, the second one's
upsert waits for the first's commit and then updates the row: only the first sees
its insert, so only it records the fact. The dedupe key is unique per project all
the same (`ON CONFLICT DO NOTHING`), so a fact is never stored twice.

Raw DBAPI SQL like the rest of the writer process, which imports no SQLAlchemy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from storage import jsontext, rows
from storage.rows import Row
from storage.writer.placeholders import marks

FACTS = rows.ALERT_FACTS
KEY_LENGTH = rows.DEDUPE_KEY_LENGTH
# A fact's details carry the message for the alert's text, not the whole of a long one.
MESSAGE_LENGTH = 1_000
# Positions in the writer's insert rows of errors: (project_id, *wire row, received_us).
_AT = {name: 1 + rows.ERROR_EVENTS.position(name)
       for name in ("fingerprint", "exception_class", "message", "service", "environment",
                    "release")}
_FINGERPRINT = _AT["fingerprint"]
_COLUMNS = ("project_id", "kind", "subject", "dedupe_key", "at_us", "details", "created_us")

GroupKey = tuple[int, str]


def dedupe_key(key: str) -> str:
    """`key` as stored: itself when it fits the column, else its start and the SHA-256
    of the whole, so that a long fingerprint or service name still makes one key per
    fact and the same one on every collector."""
    if len(key) <= KEY_LENGTH:
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{key[:KEY_LENGTH - len(digest) - 1]}~{digest}"


@dataclass(frozen=True, slots=True)
class NewGroup:
    """A group the commit's upsert inserted, with its delta."""

    project_id: int
    fingerprint: str
    exception_class: str
    message: str
    count: int
    first_seen_us: int
    last_seen_us: int


@dataclass(frozen=True, slots=True)
class Reopened:
    """A resolved group the commit reopened: its reopen count after, its count and
    first seen before the commit's delta, and the occurrence's time."""

    project_id: int
    fingerprint: str
    reopen_count: int
    count_before: int
    first_seen_us: int
    at_us: int


def _first_errors(stored: Sequence[Row], wanted: set[GroupKey]) -> dict[GroupKey, Row]:
    """The first stored error of each wanted group, in the commit's order."""
    first: dict[GroupKey, Row] = {}
    for row in stored:
        key = (row[0], row[_FINGERPRINT])
        if key in wanted and key not in first:
            first[key] = row
            if len(first) == len(wanted):
                break
    return first


def _origin(error: Row | None, exception_class: str, message: str) -> dict[str, Any]:
    if error is not None:
        exception_class, message = error[_AT["exception_class"]], error[_AT["message"]]
    return {"exception_class": exception_class, "message": message[:MESSAGE_LENGTH],
            **{name: None if error is None else error[_AT[name]]
               for name in ("environment", "service", "release")}}


def record(cursor: Any, dialect: str, new: Iterable[NewGroup], reopened: Iterable[Reopened],
           deltas: dict[GroupKey, Any], stored: Sequence[Row], now_us: int,
           issue_type: str = "error") -> None:
    """Insert the facts of the commit's new and reopened groups. `deltas` are the
    commit's group deltas (their count and last seen), `stored` the insert rows of
    the errors it stored, which name each fact's environment, service and release;
    `issue_type` is the groups' (storage/writer/detect.py commits `performance` ones
    apart), named in the details of any other than errors."""
    new, reopened = list(new), list(reopened)
    if not new and not reopened:
        return
    wanted = {(g.project_id, g.fingerprint) for g in new}
    wanted.update((r.project_id, r.fingerprint) for r in reopened)
    first = _first_errors(stored, wanted)
    facts: list[Row] = []
    kind = {} if issue_type == "error" else {"issue_type": issue_type}
    for g in new:
        key = (g.project_id, g.fingerprint)
        details = {**_origin(first.get(key), g.exception_class, g.message), "count": g.count,
                   "first_seen_us": g.first_seen_us, "last_seen_us": g.last_seen_us, **kind}
        facts.append((g.project_id, "new_group", g.fingerprint,
                      dedupe_key(f"new_group:{g.fingerprint}"), g.first_seen_us,
                      jsontext.dumps(details), now_us))
    for r in reopened:
        key = (r.project_id, r.fingerprint)
        delta = deltas.get(key)
        details = {**_origin(first.get(key), delta.exception_class if delta else "",
                             delta.message if delta else ""),
                   "count": r.count_before + (delta.count if delta else 0),
                   "first_seen_us": r.first_seen_us,
                   "last_seen_us": max(r.at_us, delta.last_seen_us if delta else 0),
                   "reopen_count": r.reopen_count, **kind}
        facts.append((r.project_id, "regression", r.fingerprint,
                      dedupe_key(f"regression:{r.fingerprint}:{r.reopen_count}"), r.at_us,
                      jsontext.dumps(details), now_us))
    # Sorted by key: two PostgreSQL transactions wait for each other's keys in one order.
    facts.sort(key=lambda fact: (fact[0], fact[3]))
    cursor.executemany(
        f'INSERT INTO "{FACTS}" ({", ".join(_COLUMNS)}) VALUES '
        f"({marks(dialect, len(_COLUMNS))}) "
        "ON CONFLICT (project_id, dedupe_key) DO NOTHING", facts)
