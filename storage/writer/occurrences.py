"""Errors with an occurrence key, stored and counted once.

An SDK may send one exception twice: as a span event, in a traces request, and as a
log record, in a logs request that may reach another collector sharing the database.
Both copies get one occurrence key (processors/exceptions.occurrence_key), unique per
project where set (storage/schema/errors.py). The first copy committed is kept; a later one
is neither stored nor counted:

- within one commit, the first copy in the commit's order is kept (the others never
  reach the database);
- against the database, the insert does nothing when a copy is stored, and says which
  rows it inserted (`ON CONFLICT DO NOTHING RETURNING`; on PostgreSQL from a staging
  table filled by COPY: storage/writer/copy.py). On PostgreSQL a second writer
  inserting a key that a first has inserted but not committed waits for that commit,
  so of two collectors exactly one keeps it;
- the group deltas and reopen candidates of every batch that lost a copy are counted
  again from the errors it kept (storage/writer/group_deltas.recount, as storage/wire/batch.py
  does for records the store cannot hold), so that a group's count, hourly counts and
  first/last seen are those of the copies kept, and a copy that was not kept reopens
  nothing; the facets count only the rows stored (storage/writer/facets.py).

A kept copy without a log time (a span event) takes the log time of a later copy that
has one (the log record), so that the error can lead to its record either way.

Errors without a key (Sounding's own API, exceptions outside a trace) never come
here: the writer inserts them as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from storage import rows
from storage.rows import Row, WireBatch
from storage.writer.copy import StagedTable, Staging, copy_rows
from storage.writer.group_deltas import recount
from storage.writer.placeholders import mark, marks

ERRORS = rows.ERROR_EVENTS
# Positions in the writer's insert row: (project_id, *wire row, received_us).
KEY = 1 + ERRORS.position("occurrence_key")
LOG_TIME = 1 + ERRORS.position("log_time_ns")
key_of = itemgetter(KEY)
# The values of the wire rows, read by name.
_ERROR = ERRORS.getter("fingerprint", "ts_us", "exception_class", "message")
# Rows per multi-row insert: SQLite binds at most 32,766 values a statement.
MAX_ROWS = 500

StoredKey = tuple[int, str]  # (project id, occurrence key)


class KeyedErrors:
    """Writes a commit's errors when some have a key; SQL prepared once per dialect."""

    def __init__(self, dialect: str, table: str, columns: Sequence[str]) -> None:
        self.dialect = dialect
        self.staging: Staging | None = None
        q = mark(dialect)
        self.names = ", ".join(f'"{c}"' for c in columns)
        self.table = table
        self.row_marks = f"({marks(dialect, len(columns))})"
        self.rows_per_insert = max(1, min(MAX_ROWS, 30_000 // len(columns)))
        self.plain_sql = f'INSERT INTO "{table}" ({self.names}) VALUES {self.row_marks}'
        self.staged = StagedTable(ERRORS, columns, ("project_id", "occurrence_key"),
                                  returning=("project_id", "occurrence_key"))
        self.fill_sql = (f'UPDATE "{table}" SET log_time_ns = {q} WHERE project_id = {q} '
                         f"AND occurrence_key = {q} AND log_time_ns IS NULL")

    def _insert_sql(self, n: int) -> str:
        # No conflict target: the only unique index a new row can meet is the key's.
        return (f'INSERT INTO "{self.table}" ({self.names}) VALUES '
                f"{', '.join([self.row_marks] * n)} "
                "ON CONFLICT DO NOTHING RETURNING project_id, occurrence_key")

    def write(self, cursor: Any, batches: Sequence[WireBatch], errors: list[Row],
              staging: Staging | None = None) -> tuple[Sequence[WireBatch], list[Row]]:
        """Insert `errors` (the insert rows of every error of `batches`, in order);
        return `batches` with the copies that were not kept taken out of their groups,
        and the rows stored (what the facets count: storage/writer/facets.py).
        `staging`: PostgreSQL's, for COPY."""
        self.staging = staging if self.dialect == "postgresql" else None
        plain = [row for row in errors if row[KEY] is None]
        if plain and self.staging is not None:
            copy_rows(cursor, self.table, self.staged.columns, self.staged.types, plain)
        elif plain:
            cursor.executemany(self.plain_sql, plain)
        first: dict[StoredKey, int] = {}  # key -> index in `errors` of the copy kept
        dropped: set[int] = set()
        for index, row in enumerate(errors):
            if row[KEY] is None:
                continue
            key = (row[0], row[KEY])
            kept = first.get(key)
            if kept is None:
                first[key] = index
                continue
            dropped.add(index)  # a second copy in this very commit
            if errors[kept][LOG_TIME] is None and row[LOG_TIME] is not None:
                errors[kept] = (*errors[kept][:LOG_TIME], row[LOG_TIME],
                                *errors[kept][LOG_TIME + 1:])
        # Sorted, so that two PostgreSQL transactions wait for keys in the same order.
        ordered = sorted(first.items())
        inserted = self._insert(cursor, [errors[index] for _, index in ordered])
        fills = []
        for key, index in ordered:
            if key in inserted:
                continue
            dropped.add(index)  # a copy was committed before
            if errors[index][LOG_TIME] is not None:
                fills.append((errors[index][LOG_TIME], *key))
        if fills:
            cursor.executemany(self.fill_sql, fills)
        if not dropped:
            return batches, errors
        stored = [row for index, row in enumerate(errors) if index not in dropped]
        return discount(batches, dropped), stored

    def _insert(self, cursor: Any, keyed: list[Row]) -> set[StoredKey]:
        if self.staging is not None:
            return {(int(project_id), key) for project_id, key
                    in self.staging.insert(cursor, self.staged, keyed)}
        inserted: set[StoredKey] = set()
        step = self.rows_per_insert
        for start in range(0, len(keyed), step):
            chunk = keyed[start:start + step]
            cursor.execute(self._insert_sql(len(chunk)),
                           [value for row in chunk for value in row])
            inserted.update((int(project_id), key) for project_id, key in cursor.fetchall())
        return inserted


def discount(batches: Sequence[WireBatch], dropped: set[int]) -> list[WireBatch]:
    """`batches` with the group deltas and reopen candidates of each fingerprint that
    lost a copy (`dropped`: indexes over every batch's errors, in order) counted
    again from the errors kept."""
    out = []
    offset = 0
    for batch in batches:
        mine = {i - offset for i in dropped if offset <= i < offset + len(batch.errors)}
        offset += len(batch.errors)
        out.append(_recount(batch, mine) if mine else batch)
    return out


def _recount(batch: WireBatch, dropped: set[int]) -> WireBatch:
    errors = [_ERROR(row) for row in batch.errors]
    touched = {errors[i][0] for i in dropped}
    groups, reopen = recount(batch.groups, batch.reopen, touched,
                             [e for i, e in enumerate(errors) if i not in dropped])
    return batch._replace(groups=groups, reopen=reopen)
