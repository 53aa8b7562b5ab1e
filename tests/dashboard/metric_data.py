"""Metric points for the dashboard tests, written into a running collector's store
by the store's real writer (storage/wire/batch.py), as the metrics door commits them."""

from __future__ import annotations

from typing import Any

from model.records import SUM, TEMPORALITY_DELTA, Batch, MetricPoint
from storage.store import Store
from storage.wire.batch import write_batches
from tests.support.server import Server

S = 1_000_000_000
# 2026-11-20T10:00:00Z: charts of these points ask for a custom range from it.
T0 = 1_795_168_800
RANGE = {"range": "custom", "from": "2026-11-20T10:00", "to": "2026-11-20T11:00"}


def point(name: str, time_s: int, value: float = 1.0, kind: str = SUM,
          attributes: dict[str, Any] | None = None, service: str = "web",
          **values: Any) -> MetricPoint:
    """A delta point `time_s` seconds after T0 (a counter unless told otherwise)."""
    return MetricPoint(name=name, unit=values.pop("unit", "1"),
                       description=values.pop("description", ""), kind=kind,
                       temporality=values.pop("temporality", TEMPORALITY_DELTA),
                       monotonic=values.pop("monotonic", kind == SUM), service_name=service,
                       resource_attributes={"service.name": service}, scope_name="test",
                       attributes=attributes or {}, start_ns=(T0 + time_s - 10) * S,
                       time_ns=(T0 + time_s) * S,
                       value=value if kind in ("gauge", "sum") else None, **values)


def write_metrics(server: Server, *points: MetricPoint, project: str = "acme") -> None:
    (project_id,) = [r.id for r in server.query("SELECT id FROM projects WHERE name = :name",
                                                name=project)]
    store = Store(server.db_url)
    try:
        with store.writer.begin() as conn:
            write_batches(conn, [Batch(project_id, metrics=list(points))], 1)
    finally:
        store.dispose()
