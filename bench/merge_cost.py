"""What merged groups cost the error list and the writer (storage/queries/members.py,
storage/writer/merged.py): GROUPS groups of 3 errors each on a fresh SQLite file (or
the URL given), then the list's median time (20 calls) by last seen, by count and
with a search, and a commit of 200 errors over 200 existing groups (30 calls).
With `merge`, 100 merges of 3 groups each first.

    PYTHONPATH=. python bench/merge_cost.py 20000 [URL] [merge]

Run it with another checkout on PYTHONPATH for the cost before.

2026-11-24, the shared 2-core machine (busy), SQLite, 20,000 groups, medians in ms:
before this change: list by last seen 5.3-5.6, by count 15-16, search 17-20, commit
10-13; after, no merge: 6.0-7.0, 16-18, 18-19, 10-11; after, 100 merges: 13, 35, 27,
11. PostgreSQL (fresh database, statistics not yet gathered): before 42, 46, 57, 13;
after, no merge 55, 63, 74, 17; after, 100 merges 65-140, 70-146, 98-100, 17 (noisy).
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
from storage.queries import errors as eq
from storage.store import Store
from storage.wire.batch import write_batches

NOW = 1_795_168_800
US = 1_000_000


def timed(fn: Callable[[], Any], n: int = 20) -> float:
    fn()
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(samples), 2)


def main(argv: list[str]) -> None:
    groups = int(argv[0]) if argv else 20_000
    url = next((a for a in argv if "://" in a), f"sqlite:///{tempfile.mkdtemp()}/b.db")
    store = Store(url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "bench")
    stages = (GroupingProcessor("grouping"), ReopenProcessor("reopen"))

    def write(errors: list[ErrorEvent]) -> None:
        batch = Batch(project_id=project, errors=errors)
        for stage in stages:
            batch = stage.process(batch)
        with store.writer.begin() as conn:
            write_batches(conn, [batch], NOW * US)

    for start in range(0, groups, 1000):
        write([ErrorEvent(f"fp{i}", "E", "m", ["a.py:1"], (NOW - 86400 + i % 80000) * US,
                          environment="prod")
               for i in range(start, start + 1000) for _ in range(3)])
    if "merge" in argv:
        from storage.groups import merge
        page = eq.list_groups(store, project, ("open",), limit=groups, now_us=NOW * US)
        ids = [i.group.id for i in page.items]
        for k in range(0, 300, 3):
            merge.merge(store, project, ids[k], ids[k:k + 3])
    for name, kw in (("last seen", {}), ("count", {"sort": "count"}),
                     ("search", {"search": "fp12"})):
        ms = timed(lambda kw=kw: eq.list_groups(store, project, ("open",), now_us=NOW * US,
                                                **kw))  # type: ignore[arg-type]
        print(f"list, {name}: {ms} ms")
    ms = timed(lambda: write([ErrorEvent(f"fp{i}", "E", "m", ["a.py:1"], (NOW - 10) * US)
                              for i in range(200)]), 30)
    print(f"commit of 200 errors: {ms} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
