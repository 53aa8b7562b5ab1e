"""CPU per session item of release health, without HTTP (issue 26).

`python -m bench.session_cost [repeats]` times, on this tree, for the envelopes of
bench/payloads_sentry.py's `sentry_sessions` (in turn: a whole session in one update,
a session's last update, a crash, a two-minute `sessions` aggregate; one item each):

- decode: envelope bytes to session counts (receiver/sentry/items.py, sessions.py);
- all: decode + the wire encoding (storage/wire/batch.py);
- write: the writer's commit of those wire batches on a fresh SQLite file, one
  envelope a transaction as the door commits it (storage/writer/sessions.py: marks,
  rollups, users);
- write again: the same batches once more, every mark already stored (a retry:
  nothing is added).

The minimum of several runs of process CPU time, in microseconds per session item.
Run it on two commits to compare them, or count instructions with
`valgrind --tool=callgrind python -m bench.session_cost 1`.
"""

from __future__ import annotations

import pickle
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.decode_cost import per_record
from bench.payloads_sentry import sentry_sessions
from model.records import Batch
from receiver.sentry.items import decode_envelope_body
from storage import keys, sqlite
from storage.store import Store
from storage.wire.batch import encode
from storage.writer.commit import BatchWriter

ITEMS = 400  # per timed run: one item an envelope
NOW_US = 1_795_168_800 * 1_000_000


def wire(body: bytes, project_id: int = 1) -> Any:
    return encode(Batch(project_id, sessions=decode_envelope_body(body, NOW_US).sessions))


class WriterRuns:
    """The writer's commits of `bodies`, on a fresh copy of one migrated SQLite file a
    run; with `twice`, every batch is committed a second time and only that is timed."""

    def __init__(self, bodies: list[bytes], directory: str) -> None:
        self.directory = directory
        self.template = f"{directory}/template.db"
        store = Store(f"sqlite:///{self.template}")
        store.upgrade()
        with store.writer.begin() as conn:
            project = keys.ensure_project(conn, "bench")
        store.dispose()
        self.wires = [pickle.loads(wire(b, project).payload) for b in bodies]
        self.timings: dict[bool, list[float]] = {False: [], True: []}

    def run(self, twice: bool) -> None:
        path = f"{self.directory}/run.db"
        for suffix in ("", "-wal", "-shm"):
            Path(path + suffix).unlink(missing_ok=True)
        shutil.copyfile(self.template, path)
        writer = BatchWriter("sqlite")
        conn = sqlite3.connect(path, isolation_level=None)
        sqlite.apply_pragmas(conn, "NORMAL")
        cursor = conn.cursor()
        try:
            for again in (False, True) if twice else (False,):
                started = time.process_time()
                for batch in self.wires:
                    cursor.execute("BEGIN IMMEDIATE")
                    writer.write(cursor, [batch], NOW_US)
                    cursor.execute("COMMIT")
                    writer.committed()
                if again == twice:
                    self.timings[twice].append(time.process_time() - started)
        finally:
            conn.close()


def main(repeats: int = 7) -> None:
    envelopes = sentry_sessions()
    bodies = [envelopes.render(n) for n in range(ITEMS)]
    print(f"envelopes: {min(map(len, bodies))} to {max(map(len, bodies))} bytes, "
          "one session item each")
    for name, run in [("decode", lambda: [decode_envelope_body(b, NOW_US) for b in bodies]),
                      ("all", lambda: [wire(b) for b in bodies])]:
        print(f"{name:12s} {per_record(run, ITEMS, repeats):8.1f} us/item")
    with tempfile.TemporaryDirectory() as directory:
        writes = WriterRuns(bodies, directory)
        for _ in range(repeats):
            writes.run(False)
            writes.run(True)
    if repeats:
        for twice, name in ((False, "write"), (True, "write again")):
            print(f"{name:12s} {min(writes.timings[twice]) / ITEMS * 1e6:8.1f} us/item")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
