"""CPU per Sentry error event of the decode path and of the writer, without HTTP.

`python -m bench.sentry_cost [repeats]` times, on this tree, for the envelope in
bench/sentry_event_10k.envelope (one ~10 KB error event as Python's sentry-sdk 2.x
sends it: 10 frames with source context, 20 breadcrumbs, contexts, user, request,
tags, extra and modules; captured once from the real SDK, its ids replaced by
bench/payloads_sentry.py's marks so that each copy gets its own):

- decode: envelope bytes to the error record (receiver/sentry/items.py);
- all: decode + the default pipeline's stages (filters and scrub included, with the
  default policy) + the wire encoding, as the serve process runs them for the door;
- write: the writer's commit of those wire batches on a fresh SQLite file, BATCH
  events a transaction, each a new occurrence of the one group.

The minimum of several runs of process CPU time, in microseconds per event. Run it
on two commits to compare them; or count instructions with `python -m bench.sentry_cost
instructions` (callgrind: each case run over 20 events in a process of its own, less
the same process over none; steady whatever else the machine runs).
"""

from __future__ import annotations

import pickle
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import callgrind
from bench.decode_cost import PROCESSORS, per_record
from bench.payloads_sentry import Envelopes
from model.records import Batch
from processors.filters import FiltersProcessor
from processors.logexceptions import LogExceptionsProcessor
from processors.scrub import ScrubProcessor
from receiver.sentry.items import decode_envelope_body
from storage import keys, sqlite
from storage.store import Store
from storage.wire.batch import encode
from storage.writer.commit import BatchWriter

ENVELOPE = Path(__file__).with_name("sentry_event_10k.envelope")
EVENTS = 200  # per timed run
BATCH = 1  # events per commit: one request's envelope, as the door commits it
NOW_US = 1_795_168_800 * 1_000_000
# The default pipeline (sounding/config.py DEFAULT_PROCESSORS), in its order.
STAGES = [FiltersProcessor("filters"), ScrubProcessor("scrub"), *PROCESSORS[:3],
          LogExceptionsProcessor("logexceptions"), *PROCESSORS[3:]]


def pipeline(body: bytes, project_id: int = 1) -> Any:
    batch = Batch(project_id, errors=decode_envelope_body(body, NOW_US).errors)
    for stage in STAGES:
        batch = stage.process(batch)
    return encode(batch)


class WriterRuns:
    """Timed runs of the writer's commits of the wire batches of `bodies`, each on a
    fresh copy of one migrated SQLite file (so every run inserts new occurrences into
    tables of the same size); the copy is the only set-up a run repeats."""

    def __init__(self, bodies: list[bytes], directory: str) -> None:
        self.directory = directory
        self.template = f"{directory}/template.db"
        store = Store(f"sqlite:///{self.template}")
        store.upgrade()
        with store.writer.begin() as conn:
            project = keys.ensure_project(conn, "bench")
        store.dispose()
        self.wires = [pickle.loads(pipeline(b, project).payload) for b in bodies]
        self.timings: list[float] = []

    def __call__(self) -> None:
        path = f"{self.directory}/run.db"
        for suffix in ("", "-wal", "-shm"):
            Path(path + suffix).unlink(missing_ok=True)
        shutil.copyfile(self.template, path)
        writer = BatchWriter("sqlite")
        # As the writer process connects (exporters/sql/writer.py).
        conn = sqlite3.connect(path, isolation_level=None)
        sqlite.apply_pragmas(conn, "NORMAL")
        cursor = conn.cursor()
        try:
            started = time.process_time()
            for i in range(0, len(self.wires), BATCH):
                cursor.execute("BEGIN IMMEDIATE")
                writer.write(cursor, self.wires[i:i + BATCH], NOW_US)
                cursor.execute("COMMIT")
                writer.committed()
            self.timings.append(time.process_time() - started)
        finally:
            conn.close()


def main(repeats: int = 7, only: str = "", events: int = EVENTS) -> None:
    envelopes = Envelopes([ENVELOPE.read_bytes()])
    bodies = [envelopes.render(n) for n in range(events)]
    body = bodies[0]
    print(f"envelope: {len(body)} bytes")
    cases: list[tuple[str, Callable[[], Any], int]] = [
        ("decode", lambda: [decode_envelope_body(b, NOW_US) for b in bodies], events),
        ("all", lambda: [pipeline(b) for b in bodies], events),
    ]
    for name, run, records in cases:
        if only and name != only:
            continue
        if repeats:
            print(f"{name:8s} {per_record(run, records, repeats):8.1f} us/event")
    if only and only != "write":
        return
    with tempfile.TemporaryDirectory() as directory:
        write = WriterRuns(bodies, directory)
        for _ in range(repeats):
            write()
    if repeats:
        print(f"{'write':8s} {min(write.timings) / EVENTS * 1e6:8.1f} us/event")


def count_instructions(events: int = 20) -> None:
    """Instructions per event of each case, by callgrind (`main(0, case)` is the
    set-up alone: the envelopes rendered, the modules imported)."""
    for case in ("decode", "all"):
        counts = [callgrind.instructions("bench.sentry_cost", str(n), case, str(events))
                  for n in (0, 1)]
        print(f"{case:8s} {(counts[1] - counts[0]) / events:10.0f} instructions/event",
              flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["instructions"]:
        count_instructions()
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 7,
             sys.argv[2] if len(sys.argv) > 2 else "",
             int(sys.argv[3]) if len(sys.argv) > 3 else EVENTS)
