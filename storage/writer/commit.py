"""Writing batches: what one group commit does inside its one transaction.

Batches reach the writer in a compact wire form (storage/wire/batch.py): plain tuples in
the order of their row forms (storage/rows.py), cheap to pickle across to the writer
process and cheap to turn into rows. On SQLite rows go to the driver's `executemany`
with SQL prepared once; the ORM-level statement machinery would cost more per row
than SQLite's insert. On PostgreSQL they go in with COPY (storage/writer/copy.py).

Every statement is an insert or an atomic upsert (`count = count + n`), never a
read-modify-write, so several collector processes can write one database and the
counts stay exact. Keys are written in sorted order so that two PostgreSQL
transactions touching the same groups lock them in the same order and cannot
deadlock.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from storage import rows
from storage.rows import Row, RowForm, WireBatch
from storage.writer.checkins import CheckInWriter
from storage.writer.copy import StagedTable, Staging, copy_rows, copy_types
from storage.writer.detect import TraceWatch
from storage.writer.facets import write_facets
from storage.writer.groups import write_groups, write_requests
from storage.writer.occurrences import KeyedErrors, key_of
from storage.writer.operations import write_operations
from storage.writer.peers import PeerMatcher
from storage.writer.placeholders import mark, marks
from storage.writer.points import MetricsWriter
from storage.writer.sessions import write_sessions


def _insert_columns(form: RowForm, received: bool = False) -> tuple[str, ...]:
    """An insert's columns: the project, the wire row's fields in its order, then
    the time received when `received`. The writer builds each row in the same order
    (`(project_id, *row)` or `(project_id, *row, received_us)`); refused at import
    unless these are exactly the columns the form leaves to the writer."""
    added = ("project_id", "received_us") if received else ("project_id",)
    if set(form.column_names) - set(form.names) != set(added):
        raise ValueError(f"the writer adds {added} to {form.table}, which leaves "
                         f"{tuple(set(form.column_names) - set(form.names))} to it")
    return (added[0], *form.names, *added[1:])


# Table and column names from storage/rows.py, whose declaration storage/schema/
# builds its tables from: the writer process imports neither SQLAlchemy (that alone
# would double its memory) nor the schema.
SPANS, RESOURCES = rows.SPANS.table, rows.RESOURCES.table
ERROR_EVENTS, DEPLOYS, LOGS = rows.ERROR_EVENTS.table, rows.DEPLOYS.table, rows.LOGS.table
SPAN_COLUMNS = _insert_columns(rows.SPANS)
RESOURCE_COLUMNS = _insert_columns(rows.RESOURCES)
ERROR_COLUMNS = _insert_columns(rows.ERROR_EVENTS, received=True)
DEPLOY_COLUMNS = _insert_columns(rows.DEPLOYS, received=True)
LOG_COLUMNS = _insert_columns(rows.LOGS, received=True)
FEEDBACK = rows.FEEDBACK.table
FEEDBACK_COLUMNS = _insert_columns(rows.FEEDBACK, received=True)
_FEEDBACK_KEY = itemgetter(0, FEEDBACK_COLUMNS.index("feedback_id"))


def insert_sql(dialect: str, table: str, columns: Sequence[str], suffix: str = "",
               literals: dict[str, int] | None = None) -> str:
    """An INSERT of `columns`, each bound but those given as integer `literals`."""
    names = ", ".join(f'"{c}"' for c in columns)
    if not literals:
        values = marks(dialect, len(columns))
    else:
        values = ", ".join(str(int(literals[c])) if c in literals else mark(dialect)
                           for c in columns)
    return (f'INSERT INTO "{table}" ({names}) VALUES ({values})'
            + (f" {suffix}" if suffix else ""))


class LiteralInserts:
    """SQLite's insert of a table's wire rows as they came, the values the writer adds
    (the batch's project, the commit's time received) written into the statement as
    literals: binding them would take a new tuple for every row, the wire row's values
    copied behind them, about 2,600 instructions of the writer's 56,000 a span
    (bench/span_stages.py writer). A statement per project (and commit's time),
    remembered for the last few; the sqlite3 module keeps them prepared."""

    KEEP = 64

    def __init__(self, dialect: str, table: str, columns: Sequence[str], suffix: str) -> None:
        self.dialect, self.table, self.columns, self.suffix = dialect, table, columns, suffix
        self._sql: dict[tuple[int, ...], str] = {}

    def of(self, *added: int) -> str:
        """The insert with `added` (the values the writer adds, in the columns' order
        of rows.BY_WRITER) as literals."""
        sql = self._sql.get(added)
        if sql is None:
            if len(self._sql) >= self.KEEP:
                self._sql.clear()
            literals = dict(zip(rows.BY_WRITER, added, strict=False))
            sql = self._sql[added] = insert_sql(self.dialect, self.table, self.columns,
                                                self.suffix, literals)
        return sql


class BatchWriter:
    """Writes wire batches through a DBAPI cursor; SQL prepared once per dialect."""

    def __init__(self, dialect: str, trace_wait_s: float = 10.0) -> None:
        self.dialect = dialect
        # A retried batch that was committed already must not duplicate its spans.
        self.spans_sql = LiteralInserts(dialect, SPANS, SPAN_COLUMNS, "ON CONFLICT DO NOTHING")
        self.resources_sql = insert_sql(dialect, RESOURCES, RESOURCE_COLUMNS,
                                        "ON CONFLICT DO NOTHING")
        self.errors_sql = insert_sql(dialect, ERROR_EVENTS, ERROR_COLUMNS)
        self.keyed_errors = KeyedErrors(dialect, ERROR_EVENTS, ERROR_COLUMNS)
        self.deploys_sql = insert_sql(dialect, DEPLOYS, DEPLOY_COLUMNS)
        # Feedback is keyed by its id: a retried envelope stores it once.
        self.feedback_sql = insert_sql(dialect, FEEDBACK, FEEDBACK_COLUMNS,
                                       "ON CONFLICT DO NOTHING")
        # Log records are keyed by what they are (storage/logbody.py): a retried
        # request that was committed already adds no row.
        self.logs_sql = LiteralInserts(dialect, LOGS, LOG_COLUMNS, "ON CONFLICT DO NOTHING")
        self.copy = dialect == "postgresql"
        self.staging = Staging()
        # PostgreSQL: each staged insert's SELECT in key order (storage/writer/copy.py).
        self.staged_resources = StagedTable(rows.RESOURCES, RESOURCE_COLUMNS, ("project_id", "id"))
        self.staged_spans = StagedTable(rows.SPANS, SPAN_COLUMNS,
                                        ("project_id", "trace_id", "span_id"), copy_first=True)
        self.staged_logs = StagedTable(rows.LOGS, LOG_COLUMNS, ("project_id", "record_key"),
                                       copy_first=True)
        self.error_types = copy_types(rows.ERROR_EVENTS, ERROR_COLUMNS)
        self.deploy_types = copy_types(rows.DEPLOYS, DEPLOY_COLUMNS)
        self.metrics = MetricsWriter(dialect, self.staging)
        self.check_ins = CheckInWriter(dialect)
        self.peers = PeerMatcher()
        # The facts of traces not yet complete, for the performance detectors.
        self.traces = TraceWatch(trace_wait_s)

    def write(self, cursor: Any, batches: Sequence[tuple[Any, ...]], received_us: int,
              issue_type: str = "error") -> None:
        """Write wire batches, named (WireBatch) or as the plain tuples they are pickled
        as (storage/wire/batch.py's encode); `issue_type`: their errors' groups'
        (storage/writer/detect.py writes `performance` findings apart)."""
        named = [WireBatch._make(batch) for batch in batches]
        if self.copy:
            self.staging.begin(cursor)
        self._spans(cursor, named)
        self._logs(cursor, named, received_us)
        # Without the copies of errors stored before (storage/writer/occurrences.py):
        # groups and facets count the errors stored, once.
        counted, stored = self._errors(cursor, named, received_us)
        write_groups(cursor, self.dialect, counted, stored, received_us, issue_type)
        write_facets(cursor, self.dialect, stored)
        self._deploys(cursor, named, received_us)
        write_requests(cursor, self.dialect, named)
        write_operations(cursor, self.dialect, named)
        self.peers.write(cursor, self.dialect, named, received_us)
        self.metrics.write(cursor, named, received_us)
        write_sessions(cursor, self.dialect, named, received_us)
        feedback = sorted(((batch.project_id, *said, received_us)
                           for batch in named for said in batch.feedback),
                          key=_FEEDBACK_KEY)
        if feedback:  # few, and sorted: two commits meet the same ids in one order
            cursor.executemany(self.feedback_sql, feedback)
        self.check_ins.write(cursor, named, received_us)
        self.traces.note(named)

    def committed(self) -> None:
        """Called once the transaction of the last `write` is committed."""
        self.metrics.committed()
        self.peers.committed()
        self.traces.committed(time.monotonic())
        self.staging.committed()

    def _spans(self, cursor: Any, batches: Sequence[WireBatch]) -> None:
        # Sorted, so that two transactions meet the same resources in the same order.
        resources = sorted({(batch.project_id, *resource)
                            for batch in batches for resource in batch.resources})
        if resources:
            self._insert(cursor, self.resources_sql, self.staged_resources, resources)
        if self.copy:
            spans: list[Row] = [(batch.project_id, *span) for batch in batches
                                for span in batch.spans]
            if spans:
                self.staging.insert(cursor, self.staged_spans, spans)
            return
        for batch in batches:  # SQLite: the wire rows as they came (LiteralInserts)
            if batch.spans:
                cursor.executemany(self.spans_sql.of(batch.project_id), batch.spans)

    def _insert(self, cursor: Any, sql: str, staged: StagedTable, values: list[Row]) -> None:
        """Insert the rows not stored yet: COPY and a staged insert on PostgreSQL."""
        if self.copy:
            self.staging.insert(cursor, staged, values)
        else:
            cursor.executemany(sql, values)

    def _logs(self, cursor: Any, batches: Sequence[WireBatch], received_us: int) -> None:
        # After _spans, which inserted the resources of every batch, logs' too. On
        # PostgreSQL the staged insert sorts them by key: two transactions inserting the
        # same records (a retry that reached another collector) then wait for each
        # other in one order, never in a deadlock. SQLite has one writer at a time, so
        # they go in as they came (sorting cost 7% of the writer's instructions).
        if not self.copy:  # the wire rows as they came (LiteralInserts)
            for batch in batches:
                if batch.logs:
                    cursor.executemany(self.logs_sql.of(batch.project_id, received_us),
                                       batch.logs)
            return
        logs: list[Row] = [(batch.project_id, *record, received_us)
                           for batch in batches for record in batch.logs]
        if logs:
            self.staging.insert(cursor, self.staged_logs, logs)

    def _errors(self, cursor: Any, batches: Sequence[WireBatch], received_us: int
                ) -> tuple[Sequence[WireBatch], Sequence[Row]]:
        """Insert the errors; return the batches with what their groups count, and the
        insert rows of the errors stored."""
        errors: list[Row] = [(batch.project_id, *error, received_us) for batch in batches
                             for error in batch.errors]
        if not errors:
            return batches, errors
        if not any(map(key_of, errors)):  # no key (the API's errors): inserted as they come
            if self.copy:
                copy_rows(cursor, ERROR_EVENTS, ERROR_COLUMNS, self.error_types, errors)
            else:
                cursor.executemany(self.errors_sql, errors)
            return batches, errors
        return self.keyed_errors.write(cursor, batches, errors, self.staging)

    def _deploys(self, cursor: Any, batches: Sequence[WireBatch], received_us: int) -> None:
        deploys: list[Row] = [(batch.project_id, *deploy, received_us) for batch in batches
                              for deploy in batch.deploys]
        if deploys and self.copy:
            copy_rows(cursor, DEPLOYS, DEPLOY_COLUMNS, self.deploy_types, deploys)
        elif deploys:
            cursor.executemany(self.deploys_sql, deploys)
