"""Usage per project and hour (`usage_hourly`): added to in one transaction per flush
of every collector's counts (runtime/usage.py, flushed by extensions/limits.py), and
read by the Stats page and the API."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, text

from model import limits as lim
from storage import schema
from storage.store import Store

Key = tuple[int, int, str, str, str]  # project id, hour, category, outcome, reason

_ADD = text(
    "INSERT INTO usage_hourly (project_id, hour, category, outcome, reason, records, requests) "
    "VALUES (:project, :hour, :category, :outcome, :reason, :records, :requests) "
    "ON CONFLICT (project_id, hour, category, outcome, reason) DO UPDATE SET "
    "records = usage_hourly.records + excluded.records, "
    "requests = usage_hourly.requests + excluded.requests")


def add(store: Store, counted: Mapping[Key, list[int]]) -> None:
    """Add a flush's counts, in one transaction (a few rows, however many records)."""
    if not counted:
        return
    params = [{"project": k[0], "hour": k[1], "category": k[2], "outcome": k[3],
               "reason": k[4][:64], "records": v[0], "requests": v[1]}
              for k, v in sorted(counted.items())]  # one order: no deadlock between two
    with store.writer.begin() as conn:
        conn.execute(_ADD, params)


@dataclass(frozen=True)
class Usage:
    """A project's usage over some hours: totals {category: {outcome: records}}, the
    requests refused before their records were known, per outcome, the hourly series
    {hour: {outcome: records}}, and the SDKs' client reports {(category, reason):
    records}."""

    totals: dict[str, dict[str, int]]
    requests: dict[str, int]
    hourly: dict[int, dict[str, int]]
    client_discarded: dict[tuple[str, str], int]

    def as_json(self) -> dict[str, Any]:
        return {"totals": self.totals, "requests_refused_unread": self.requests,
                "hourly": [{"hour": hour, **counts}
                           for hour, counts in sorted(self.hourly.items())],
                "client_discarded": [{"category": c, "reason": r, "records": n}
                                     for (c, r), n in sorted(self.client_discarded.items())]}


def project_usage(store: Store, project_id: int, since_hour: int, until_hour: int
                  ) -> Usage:
    """Usage of a project in [since_hour, until_hour] (epoch seconds of hours)."""
    t = schema.usage_hourly
    query = (select(t.c.hour, t.c.category, t.c.outcome, t.c.reason,
                    func.sum(t.c.records), func.sum(t.c.requests))
             .where(t.c.project_id == project_id, t.c.hour >= since_hour,
                    t.c.hour <= until_hour)
             .group_by(t.c.hour, t.c.category, t.c.outcome, t.c.reason))
    totals: dict[str, dict[str, int]] = {}
    requests: dict[str, int] = {}
    hourly: dict[int, dict[str, int]] = {}
    discarded: dict[tuple[str, str], int] = {}
    with store.reader.connect() as conn:
        for hour, category, outcome, reason, records, reqs in conn.execute(query):
            records, reqs = int(records or 0), int(reqs or 0)
            if outcome == "client_discarded":
                discarded[(category, reason)] = discarded.get((category, reason), 0) + records
                continue
            per = totals.setdefault(category, {})
            per[outcome] = per.get(outcome, 0) + records
            if reqs and outcome != "accepted":
                requests[outcome] = requests.get(outcome, 0) + reqs
            hours = hourly.setdefault(int(hour), {})
            hours[outcome] = hours.get(outcome, 0) + records
    return Usage(totals, requests, hourly, discarded)


# What a project offered: every outcome of records it sent, not only those let in.
OFFERED = (lim.ACCEPTED, lim.RATE_LIMITED, lim.OVER_QUOTA, lim.SHED, lim.FILTERED)


def volumes(store: Store, project_id: int, hour: int
            ) -> tuple[dict[str, int], dict[str, float]]:
    """({category: records offered in `hour`}, {category: accepted records a second over
    the day before it})."""
    t = schema.usage_hourly
    query = (select(t.c.category, t.c.hour, t.c.outcome, func.sum(t.c.records))
             .where(t.c.project_id == project_id, t.c.hour >= hour - 24 * 3600)
             .group_by(t.c.category, t.c.hour, t.c.outcome))
    offered: dict[str, int] = {}
    accepted: dict[str, int] = {}
    with store.reader.connect() as conn:
        for category, row_hour, outcome, records in conn.execute(query):
            n = int(records or 0)
            if row_hour == hour and outcome in OFFERED:
                offered[category] = offered.get(category, 0) + n
            elif row_hour < hour and outcome == lim.ACCEPTED:
                accepted[category] = accepted.get(category, 0) + n
    return offered, {c: n / (24 * 3600) for c, n in accepted.items()}
