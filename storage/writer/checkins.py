"""Check-ins into `cron_checkins`, one row per run (storage/rows.py's CHECK_INS).

A run's first check-in inserts its row; a later one with the same id (ok or error
after in_progress) finishes it: status, duration and end time, and `processed`
back to 0 so that the cron checker (storage/crons/checker.py) looks at the run
again. Only a run still in progress changes: a retried envelope changes nothing,
and a run the checker timed out stays timed out. Everything a monitor's state
derives from check-ins is the checker's, not the writer's: several collectors'
writers never race over a monitor.

Raw DBAPI SQL like the rest of the writer process; the same upsert on both engines
(check-ins are few: no COPY), sorted by key so that two PostgreSQL transactions
lock the same rows in one order.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from storage import rows
from storage.rows import WireBatch
from storage.writer.placeholders import marks

TABLE = rows.CHECK_INS.table
COLUMNS = ("project_id", *rows.CHECK_INS.names, "received_us")
if set(COLUMNS) != set(rows.CHECK_INS.column_names):
    raise ValueError("the check-in insert must name every column of its form")
_KEY = itemgetter(0, 1)  # (project id, check_in_id)
# A run's later check-in: what it changes.
_FINISH = ("status", "duration_s", "finished_us")


def upsert_sql(dialect: str) -> str:
    names = ", ".join(f'"{c}"' for c in COLUMNS)
    changes = ", ".join(f'"{c}" = excluded."{c}"' for c in _FINISH)
    return (f'INSERT INTO "{TABLE}" ({names}) VALUES ({marks(dialect, len(COLUMNS))}) '
            f'ON CONFLICT (project_id, check_in_id) DO UPDATE SET {changes}, processed = 0 '
            f'WHERE "{TABLE}".status = ' "'in_progress' AND excluded.status <> 'in_progress'")


class CheckInWriter:
    def __init__(self, dialect: str) -> None:
        self.sql = upsert_sql(dialect)

    def write(self, cursor: Any, batches: Sequence[WireBatch], received_us: int) -> None:
        values = sorted(((batch.project_id, *row, received_us) for batch in batches
                         for row in batch.check_ins), key=_KEY)
        if values:
            cursor.executemany(self.sql, values)
