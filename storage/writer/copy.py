"""Bulk writes on PostgreSQL: raw rows go in with COPY, not `executemany`.

`executemany` sends one INSERT per row: PostgreSQL parses, plans and executes each,
which made the writer the bound at about 11,000 spans/s. COPY streams the rows in
one statement, in PostgreSQL's binary form (measured faster than the text form for
these rows: no escaping of bytes and text, no parsing of numbers).

Two helpers, used for every table the writer fills:

- `copy_rows`: COPY rows into a table, for rows that are always new (errors without
  an occurrence key, deploys).
- `Staging.insert`: rows that may already be stored (a retried request, the same
  span sent twice, a copy committed by another collector) are copied into a
  temporary staging table and then moved with one `INSERT … SELECT … ON CONFLICT DO
  NOTHING`, optionally `RETURNING` what it inserted. No conflict target is named, so
  the same SQL holds whether the table is plain or partitioned by day (its primary
  key then carries the time; tried on spans and logs partitioned so, by hand, before
  the partitions work landed). The SELECT is ordered by the table's key: two writers
  inserting the same keys wait for each other in one order and cannot deadlock.

For spans, logs and metric points, whose rows are nearly always new, the staged
insert is the way back, not the way in: the rows are first COPYed straight into the
table inside a savepoint, which costs the server half as much as staging them (one
heap written, not two, and no sort). A row already stored (or sent twice in the
commit) fails that COPY with a unique violation; two writers copying the same keys
in different orders may deadlock, and PostgreSQL then fails one of the two COPYs.
Either way the savepoint is rolled back, with the locks it took, and the rows go
through the staged insert, which skips the ones stored and waits in key order.

Staging tables are per connection (temporary), made on first use with `ON COMMIT
DELETE ROWS`: a committed transaction empties them, a rolled-back one takes its rows
(and, if it made them, the tables themselves) with it. Their columns are the
table's, taken by `CREATE … AS SELECT … WITH NO DATA`, without its constraints.

SQLite keeps `executemany`: its inserts are calls into a library, not round trips.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from storage import rows
from storage.rows import Row, RowForm

# The binary COPY type of each kind of value (storage/rows.py). JSON is sent as its
# text: the binary form of `json` is the text itself, and our JSON is text already.
_COPY_TYPES = {rows.INT32: "int4", rows.INT64: "int8", rows.FLOAT: "float8",
               rows.TEXT: "text", rows.JSON: "text", rows.BYTES: "bytea"}
_WRITER_COLUMNS = {"project_id": "int4", "received_us": "int8"}
# Rows of one SQLite upsert statement: at most 500 rows of values, as the groups'
# (storage/writer/groups.py), well within SQLite's 32,766 parameters for any table here.
SQLITE_ROWS = 500


def copy_types(form: RowForm, columns: Sequence[str]) -> list[str]:
    """The binary COPY types of `columns` of `form`'s table, the writer's own included."""
    declared = {field.name: _COPY_TYPES[field.kind] for field in form.columns}
    return [declared.get(name) or _WRITER_COLUMNS[name] for name in columns]


def _names(columns: Sequence[str]) -> str:
    return ", ".join(f'"{c}"' for c in columns)


def copy_rows(cursor: Any, table: str, columns: Sequence[str], types: Sequence[str],
              values: Iterable[Row]) -> None:
    """COPY `values` (tuples in the order of `columns`) into `table`."""
    from psycopg.types.string import BytesBinaryDumper

    # psycopg's own dumper for bytea also takes its DB-API `Binary` wrapper, in Python,
    # for every value: the plain one (in C) halves the writer's CPU per span.
    cursor.adapters.register_dumper(bytes, BytesBinaryDumper)
    with cursor.copy(f'COPY "{table}" ({_names(columns)}) FROM STDIN (FORMAT BINARY)') as copy:
        copy.set_types(types)
        write_row = copy.write_row
        for row in values:
            write_row(row)


class StagedTable:
    """The SQL of one table's staged insert, made once."""

    def __init__(self, form: RowForm, columns: Sequence[str], order: Sequence[str],
                 returning: Sequence[str] = (), copy_first: bool = False) -> None:
        """`copy_first`: COPY straight into the table first, staging only if that fails."""
        self.copy_first = copy_first and not returning
        self.table = form.table
        self.stage = f"stage_{form.table}"
        self.columns = tuple(columns)
        self.types = copy_types(form, columns)
        names = _names(columns)
        self.create_sql = (f'CREATE TEMPORARY TABLE IF NOT EXISTS "{self.stage}" '
                           f"ON COMMIT DELETE ROWS AS SELECT {names} FROM \"{self.table}\" "
                           "WITH NO DATA")
        self.insert_sql = (f'INSERT INTO "{self.table}" ({names}) SELECT {names} '
                           f'FROM "{self.stage}" ORDER BY {_names(order)} '
                           "ON CONFLICT DO NOTHING"
                           + (f" RETURNING {_names(returning)}" if returning else ""))
        self.returning = bool(returning)


class Staging:
    """The staging tables of one writer's connection. A table is made in the first
    transaction that needs it and known made once that transaction commits
    (`committed`); a new connection starts over."""

    def __init__(self) -> None:
        self.connection: Any = None
        self.made: set[str] = set()
        self.pending: set[str] = set()  # made in the transaction not committed yet
        self.used: set[str] = set()  # holding rows in this transaction

    def begin(self, cursor: Any) -> None:
        """A new transaction on `cursor`'s connection."""
        if cursor.connection is not self.connection:
            self.connection, self.made = cursor.connection, set()
        self.pending, self.used = set(), set()

    def committed(self) -> None:
        self.made |= self.pending
        self.pending = set()

    def insert(self, cursor: Any, staged: StagedTable, values: Iterable[Row]
               ) -> list[tuple[Any, ...]]:
        """Insert the rows not stored yet; with `returning`, the rows inserted."""
        if staged.copy_first:
            values = values if isinstance(values, list) else list(values)
            if self._copy_first(cursor, staged, values):
                return []
        stage = staged.stage
        if stage not in self.made and stage not in self.pending:
            cursor.execute(staged.create_sql)
            self.pending.add(stage)
        elif stage in self.used:  # a second use in one transaction: empty it first
            cursor.execute(f'TRUNCATE "{stage}"')
        self.used.add(stage)
        copy_rows(cursor, stage, staged.columns, staged.types, values)
        cursor.execute(staged.insert_sql)
        return cursor.fetchall() if staged.returning else []


    def _copy_first(self, cursor: Any, staged: StagedTable, values: list[Row]) -> bool:
        """COPY `values` into the table in a savepoint; False (rolled back) if a row was
        stored already or the COPY lost a deadlock. The savepoint is SQL, not psycopg's
        `transaction()`: that one, called first in a transaction, would open and commit
        a transaction of its own."""
        from psycopg import errors

        cursor.execute("SAVEPOINT copy_first")  # opens the caller's transaction if need be
        try:
            copy_rows(cursor, staged.table, staged.columns, staged.types, values)
        except (errors.UniqueViolation, errors.DeadlockDetected):
            cursor.execute("ROLLBACK TO SAVEPOINT copy_first")
            cursor.execute("RELEASE SAVEPOINT copy_first")
            return False
        cursor.execute("RELEASE SAVEPOINT copy_first")
        return True


def upsert_rows(cursor: Any, dialect: str, table: str, columns: Sequence[str],
                types: Sequence[str], suffix: str, values: Sequence[Row]) -> None:
    """Insert or update `values` (in key order, which they keep) with `suffix` (an ON
    CONFLICT clause). PostgreSQL: ONE statement, the rows sent as one array per column
    and read back by `unnest`, in their order, so two writers lock rows in one order.
    SQLite: rows of values, SQLITE_ROWS a statement: stepped once rather than once a
    row (a Sentry event's dozen facets cost a fifth less); SQLite upserts them one
    after the other, so a key twice in one statement adds up as in two."""
    if not values:
        return
    names = _names(columns)
    if dialect != "postgresql":
        row = f"({', '.join('?' * len(columns))})"
        for start in range(0, len(values), SQLITE_ROWS):
            chunk = values[start:start + SQLITE_ROWS]
            cursor.execute(f'INSERT INTO "{table}" ({names}) VALUES '
                           f"{', '.join([row] * len(chunk))} {suffix}",
                           [value for values_of in chunk for value in values_of])
        return
    arrays = ", ".join(f"%s::{t}[]" for t in types)
    cursor.execute(f'INSERT INTO "{table}" ({names}) SELECT * FROM unnest({arrays}) {suffix}',
                   [list(column) for column in zip(*values, strict=True)])
