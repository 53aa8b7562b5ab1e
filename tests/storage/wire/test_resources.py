"""storage/wire/resources.py: one row and one hash per resource of a batch, whichever
signal's records carry it."""

from __future__ import annotations

from model.records import Batch, LogRecord, Span
from storage import rows
from storage.jsontext import dumps
from storage.spanbody import resource_id
from storage.wire.batch import encode_batch
from storage.wire.resources import ResourceRows


def test_a_resource_gets_its_stable_id_and_one_row() -> None:
    resources = ResourceRows(7)
    attributes = {"service.name": "shop", "host.name": "a"}
    found = resources.add(attributes)
    assert found == resource_id(7, dumps(attributes))
    assert resources.ids == {id(attributes): found}
    assert resources.rows == [rows.RESOURCES.row(id=found, attributes=dumps(attributes))]
    assert ResourceRows(8).add(attributes) != found  # ids belong to one project


def test_spans_and_log_records_of_one_resource_share_its_row() -> None:
    resource = {"service.name": "shop"}
    batch = Batch(project_id=1)
    batch.spans = [Span("ab" * 16, f"{n + 1:016x}", "", "GET /", 2, 1, 2, 0, "", "shop", "",
                        resource) for n in range(3)]
    batch.logs = [LogRecord(5, 5, 9, "INFO", "", "", 0, "", "shop", "", resource,
                            body=f"line {n}") for n in range(3)]
    wire = encode_batch(batch)
    assert len(wire.resources) == 1
    (rid,) = {rows.SPANS.getter("resource_id")(s) for s in wire.spans} | {
        rows.LOGS.getter("resource_id")(r) for r in wire.logs}
    assert wire.resources[0] == rows.RESOURCES.row(id=rid, attributes=dumps(resource))
