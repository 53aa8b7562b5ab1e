"""What routing reads besides the facts (storage/alerts/lookup.py), on SQLite and
PostgreSQL: project names, group statuses and ids, and whether there is work."""

from __future__ import annotations

from model.records import Batch, ErrorEvent
from processors.grouping import GroupingProcessor
from storage import keys
from storage.alerts import lookup, outbox
from storage.groups import status
from storage.store import Store
from storage.wire.batch import write_batches

T0 = 1_795_168_800_000_000


def _project_with_groups(store: Store, name: str, *fingerprints: str) -> int:
    with store.writer.begin() as conn:
        project_id = keys.ensure_project(conn, name)
        batch = GroupingProcessor("grouping").process(Batch(project_id=project_id, errors=[
            ErrorEvent(fp, "E", "m", [], T0) for fp in fingerprints]))
        write_batches(conn, [batch], T0)
    return project_id


def test_names_statuses_and_ids_of_what_exists(store: Store) -> None:
    shop = _project_with_groups(store, "shop", "fp-a", "fp-b")
    other = _project_with_groups(store, "other", "fp-a")
    status.set_status(store, shop, "fp-b", "ignored")
    assert lookup.project_names(store, {shop, other, 999}) == {shop: "shop",
                                                                     other: "other"}
    assert lookup.project_names(store, []) == {}
    wanted = {(shop, "fp-a"), (shop, "fp-b"), (other, "fp-a"), (other, "fp-b")}
    assert lookup.group_statuses(store, wanted) == {
        (shop, "fp-a"): "open", (shop, "fp-b"): "ignored", (other, "fp-a"): "open"}
    ids = lookup.group_ids(store, wanted)
    assert set(ids) == {(shop, "fp-a"), (shop, "fp-b"), (other, "fp-a")}
    assert len(set(ids.values())) == 3
    assert lookup.group_statuses(store, set()) == {}


def test_work_waiting_says_what_routing_and_sending_would_find(store: Store) -> None:
    _project_with_groups(store, "shop", "fp-a")  # its new_group fact, unrouted
    assert lookup.work_waiting(store, T0) == (True, False)
    outbox.route_pending(store, lambda facts: [(f.id, "hook") for f in facts], now_us=T0)
    assert lookup.work_waiting(store, T0 - 1) == (False, False)  # not due yet
    assert lookup.work_waiting(store, T0) == (False, True)
    (claimed,) = outbox.claim_due(store, T0, 10, lease_s=60)
    assert lookup.work_waiting(store, T0 + 1) == (False, False)  # leased
    assert lookup.work_waiting(store, T0 + 61_000_000) == (False, True)  # lapsed
    outbox.mark_sent(store, [claimed.id], T0 + 2)
    assert lookup.work_waiting(store, T0 + 61_000_000) == (False, False)

