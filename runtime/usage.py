"""Usage per project: what each project's records came to (model/limits.py's
outcomes: accepted, filtered, rate_limited, over_quota, shed, invalid, dropped, and
the SDKs' own client_discarded), counted in this process's memory and written to the
database in batches by the auth extension's usage flusher (extensions/limits.py), a
few rows every few seconds however many records: never a row per record.

`count` is the one way in, from anywhere in the process (doors, the pipeline,
processors such as inbound filters). A decode worker counts into its own copy of
this module: runtime/offload_worker.py hands what it counted back with the request's
answer (`drain`), and the event loop adds it here (`merge`), so a processor counts
the same way wherever it runs.

/metrics shows the same counts without the project (`sounding_usage_records`, by
category and outcome): a label per project would grow with the projects, thousands
of series; per project, usage is read from the Stats page and the read API.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from prometheus_client import Counter

from runtime import telemetry

USAGE = Counter("sounding_usage_records",
                "Records by category and usage outcome, every project together (per project: "
                "the Stats page and /api/0/projects/<id>/usage)",
                ["category", "outcome"])

# (project id, epoch hour, category, outcome, reason): [records, requests]
Key = tuple[int, int, str, str, str]
_pending: dict[Key, list[int]] = {}


def count(project_id: int, category: str, outcome: str, records: int, requests: int = 0,
          reason: str = "") -> None:
    """Count `records` of `category` of a project under `outcome` (model/limits.py),
    and `requests` requests (a request refused before its body was read counts as a
    request of no known records). A negative count takes back what was counted (an
    exporter's records dropped after the pipeline counted them accepted). `reason`
    tells outcomes apart further (a client report's discard reason, a filter's name);
    keep it to a fixed set of values."""
    if not records and not requests:
        return
    _add((project_id, int(time.time()) // 3600 * 3600, category, outcome, reason), records,
         requests)
    if records > 0:
        telemetry.child(USAGE, category, outcome).inc(records)


def drain() -> dict[Key, list[int]]:
    """Everything counted since the last drain; the caller writes it (or merges it)."""
    global _pending
    taken, _pending = _pending, {}
    return taken


def merge(counted: Iterable[tuple[Key, list[int]]]) -> None:
    """Put back counts a flush could not write (the database was away): they are
    written with the next flush. /metrics counted them already."""
    for key, (records, requests) in counted:
        _add(key, records, requests)


def _add(key: Key, records: int, requests: int) -> None:
    counts = _pending.get(key)
    if counts is None:
        _pending[key] = [records, requests]
    else:
        counts[0] += records
        counts[1] += requests


def merge_from_worker(counted: Iterable[tuple[Key, list[int]]]) -> None:
    """A decode worker's counts: merged, and counted in /metrics here, where it is
    scraped (the worker's own counter is not)."""
    counted = list(counted)
    merge(counted)
    for (_project, _hour, category, outcome, _reason), (records, _requests) in counted:
        if records > 0:
            telemetry.child(USAGE, category, outcome).inc(records)
