"""What the audit log costs (storage/audit/): a bulk status change of 200 groups
(storage/groups/status.py `set_statuses`: 200 audit records in its transaction), min
and median of RUNS, on a fresh SQLite file (or the URL given); then, with AUDIT_ROWS
records in the log, the audit page's reads (storage/queries/audit.py): the newest 50,
one project's `group.*` page 3, one actor's newest 50.

    PYTHONPATH=. python bench/audit_cost.py [URL]

Run it with another checkout on PYTHONPATH (before the audit log) for the bulk
change's cost before; the reads then are skipped.

2026-11-28, the shared 2-core machine (busy, 7 agents), min of 15 (median) in ms.
SQLite, bulk change of 200 groups, five runs each, alternated: before 38-158 (42-207),
after 55-280 (86-393); the quietest pairs 38 -> 55-69: about 0.1 ms a record. Reads
of 100,000 records: newest 50 0.75-1.0, a project's group.* page 3 0.8-0.9, one
actor's 0.7-0.8. PostgreSQL (fresh database): bulk change before 339-537, after
351-571 (noise larger than the difference); reads 1.7-2.2, 88-114 (*), 2.7-6.0.
(*) Before statistics were gathered: the planner expects 47 rows of the project and
sorts all of them; after ANALYZE (autovacuum does it) an index scan backward on
(project_id, at_us), 0.4 ms.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from model.records import Batch, ErrorEvent
from processors.grouping import GroupingProcessor
from processors.reopen import ReopenProcessor
from storage import keys
from storage.groups import status
from storage.store import Store
from storage.wire.batch import write_batches

NOW = 1_795_168_800
US = 1_000_000
GROUPS, RUNS, AUDIT_ROWS = 200, 15, 100_000


def timed(fn: Callable[[], Any], n: int) -> tuple[float, float]:
    fn()
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return round(min(samples), 2), round(statistics.median(samples), 2)


def main(argv: list[str]) -> None:
    url = next((a for a in argv if "://" in a), f"sqlite:///{tempfile.mkdtemp()}/b.db")
    store = Store(url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "bench")
    batch = Batch(project_id=project, errors=[
        ErrorEvent(f"fp{i}", "E", "m", ["a.py:1"], (NOW - 60) * US) for i in range(GROUPS)])
    for stage in (GroupingProcessor("grouping"), ReopenProcessor("reopen")):
        batch = stage.process(batch)
    with store.writer.begin() as conn:
        write_batches(conn, [batch], NOW * US)
    ids = list(range(1, GROUPS + 1))
    flip = iter(["resolved", "open"] * (RUNS + 1))
    fastest, median = timed(lambda: status.set_statuses(store, project, ids, next(flip)), RUNS)
    print(f"bulk status change of {GROUPS} groups: min {fastest} ms, median {median} ms")
    try:
        from storage.audit.log import Actor, Target, record
        from storage.queries import audit as aq
    except ImportError:
        return
    with store.writer.begin() as conn:
        for i in range(AUDIT_ROWS):
            record(conn, Actor.user(i % 20, f"user{i % 20}@example.com"),
                   ("group.resolve", "group.reopen", "user.role", "key.create")[i % 4],
                   Target("group", i, project if i % 3 else None),
                   before={"status": "open"}, after={"status": "resolved"},
                   at_us=(NOW - AUDIT_ROWS + i) * US)
    for name, match, offset in (
            ("newest 50", aq.Filter(), 0),
            ("project, group.*, page 3", aq.Filter(action="group", project_id=project), 100),
            ("one actor, newest 50", aq.Filter(actor="user7@example.com"), 0)):
        fastest, median = timed(lambda m=match, o=offset: aq.entries(store, m, 50, o), RUNS)
        print(f"audit read, {name} of {AUDIT_ROWS}: min {fastest} ms, median {median} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
