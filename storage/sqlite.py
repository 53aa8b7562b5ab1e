"""The settings every SQLite connection to the store gets, in one place: the store's
engines (storage/store.py) and the writer process (exporters/sql/writer.py) both
open connections, and they must agree on the journal, the durability and how long
to wait for the write lock. Plain DBAPI calls, so that the writer process, which
does without SQLAlchemy, can use it too."""

from __future__ import annotations

import sqlite3
from typing import Any

# The sqlite3 module binds an int, a float, a str or a bytearray directly, but looks
# for an adapter for every bytes parameter first, and finding none costs about half a
# microsecond (a tuple built, a dict and two attributes looked up): a log record has
# four bytes columns, a span four. With an adapter registered for bytes it is found
# at once. The adapter is bytes.__bytes__, which hands back the same object (a bytes
# is bound as a BLOB like a bytearray): making a bytearray copied every value, 800
# instructions a column more (bench/span_stages.py writer). For the process: the
# writer's inserts and the store's queries alike.
sqlite3.register_adapter(bytes, bytes.__bytes__)
# None too goes through that search, and a miss formats and clears two AttributeErrors
# (about 4,000 instructions): 13% of the writer's CPU for metric points, which bind
# three or four NULLs each (callgrind, bench/RESULTS.md, issue 23 evening). Its adapter
# gives None back, bound as NULL as before.
sqlite3.register_adapter(type(None), lambda _: None)

SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
# Milliseconds a connection waits for another's write lock before failing: long
# enough for a group commit and a checkpoint, short of a hang.
BUSY_TIMEOUT_MS = 30_000


def apply_pragmas(connection: Any, synchronous: str) -> None:
    """Set the shared pragmas on a sqlite3 connection. WAL lets readers run beside the
    one writer; `synchronous` is the operator's durability choice (NORMAL loses at
    most the last commits on power loss, never the database)."""
    cursor = connection.cursor()
    try:
        # Before anything else, and only on a new, empty file: there it makes the file
        # incremental, so that pages freed by the retention sweep can be given back
        # (storage/retention/sqlite_space.py). On a file that is incremental already,
        # setting it runs a write transaction: every connection opened (each reader of
        # the dashboard, the alert router) would wait for the write lock behind the
        # writer's commits, up to the busy timeout. That held a collector's shutdown
        # past 10 s in the suite.
        if cursor.execute("PRAGMA page_count").fetchone()[0] == 0:
            cursor.execute("PRAGMA auto_vacuum=INCREMENTAL")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA synchronous={synchronous.upper()}")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()
