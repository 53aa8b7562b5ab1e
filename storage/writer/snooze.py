"""Snoozed groups waking up: an Ignored group snoozed until a time, until a number of
errors, or until more than a number of errors in an hour (storage/groups/status.py's
Snooze) opens again when a commit brings it an error that meets the condition.

In the writer's transaction, after the groups' counts and hourly counts are added:
the update is atomic (of two collectors, one opens the group and records the change,
with the reason `snooze ended`). A snooze until a time ends with the group's first
error after that time: a group nothing happens to stays out of the way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from storage import rows
from storage.writer import in_chunks, merged
from storage.writer.placeholders import mark

GROUPS, HOURLY = rows.ERROR_GROUPS, rows.ERROR_GROUP_HOURLY
STATUS_CHANGES = rows.ERROR_STATUS_CHANGES
REASON = "snooze ended"


def wake(cursor: Any, dialect: str, touched: Mapping[tuple[int, str], tuple[int, list[int]]]
         ) -> list[tuple[int, str]]:
    """`touched`: {(project, fingerprint): (latest error's time in µs, hours it had
    errors in)} of the commit. Opens the snoozed groups whose condition is met;
    returns them."""
    q = mark(dialect)
    snoozed: list[tuple[int, str, int, int | None, int | None, int | None]] = []
    for project_id, chunk in in_chunks.by_project(touched):
        # The count with the groups merged into it (storage/writer/merged.py).
        cursor.execute(
            f"SELECT g.fingerprint, {merged.total_count_sql('g')}, "
            f"g.snooze_until_us, g.snooze_count, g.snooze_per_hour "
            f'FROM "{GROUPS}" g WHERE project_id = {q} AND status = \'ignored\' '
            f"AND (snooze_until_us IS NOT NULL OR snooze_count IS NOT NULL "
            f"OR snooze_per_hour IS NOT NULL) "
            f"AND fingerprint IN ({', '.join([q] * len(chunk))})", (project_id, *chunk))
        snoozed += [(project_id, fp, int(n), until, at, per_hour)
                    for fp, n, until, at, per_hour in cursor.fetchall()]
    woken: list[tuple[int, str]] = []
    for project_id, fingerprint, count, until, at, per_hour in sorted(snoozed):
        latest_us, hours = touched[(project_id, fingerprint)]
        ended = (until is not None and latest_us >= until) or (at is not None and count >= at)
        if not ended and per_hour is not None and hours:
            # Per hour, the counts of its members together.
            cursor.execute(
                f'SELECT max(n) FROM (SELECT sum(count) AS n FROM "{HOURLY}" '
                f"WHERE project_id = {q} "
                f"AND fingerprint IN ({merged.members_sql(dialect)}) "
                f"AND hour IN ({', '.join([q] * len(hours))}) GROUP BY hour) AS per_hour",
                (project_id, project_id, fingerprint, project_id, fingerprint, *hours))
            busiest = cursor.fetchone()[0]
            ended = busiest is not None and int(busiest) > per_hour
        if not ended:
            continue
        cursor.execute(
            f'UPDATE "{GROUPS}" SET status = \'open\', snooze_until_us = NULL, '
            f"snooze_count = NULL, snooze_per_hour = NULL WHERE project_id = {q} "
            f"AND fingerprint = {q} AND status = 'ignored' RETURNING id",
            (project_id, fingerprint))
        if cursor.fetchone() is None:
            continue
        cursor.execute(
            f'INSERT INTO "{STATUS_CHANGES}" (project_id, fingerprint, from_status, '
            f"to_status, reason, at_us) VALUES ({q}, {q}, 'ignored', 'open', {q}, {q})",
            (project_id, fingerprint, REASON, latest_us))
        woken.append((project_id, fingerprint))
    return woken
