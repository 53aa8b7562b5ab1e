"""What routing reads besides the facts (storage/alert_lookup.py), on SQLite and
PostgreSQL: project names, group statuses and ids, and whether there is work."""

from __future__ import annotations

from processors.grouping import GroupingProcessor
from sounding.records import Batch, ErrorEvent
from storage import alert_lookup, alerts, groups, keys
from storage.store import Store
from storage.wire import write_batches

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
    groups.set_status(store, shop, "fp-b", "ignored")
    assert alert_lookup.project_names(store, {shop, other, 999}) == {shop: "shop",
                                                                     other: "other"}
    assert alert_lookup.project_names(store, []) == {}
    wanted = {(shop, "fp-a"), (shop, "fp-b"), (other, "fp-a"), (other, "fp-b")}
    assert alert_lookup.group_statuses(store, wanted) == {
        (shop, "fp-a"): "open", (shop, "fp-b"): "ignored", (other, "fp-a"): "open"}
    ids = alert_lookup.group_ids(store, wanted)
    assert set(ids) == {(shop, "fp-a"), (shop, "fp-b"), (other, "fp-a")}
    assert len(set(ids.values())) == 3
    assert alert_lookup.group_statuses(store, set()) == {}


def test_work_waiting_says_what_routing_and_sending_would_find(store: Store) -> None:
    _project_with_groups(store, "shop", "fp-a")  # its new_group fact, unrouted
    assert alert_lookup.work_waiting(store, T0) == (True, False)
    alerts.route_pending(store, lambda facts: [(f.id, "hook") for f in facts], now_us=T0)
    assert alert_lookup.work_waiting(store, T0 - 1) == (False, False)  # not due yet
    assert alert_lookup.work_waiting(store, T0) == (False, True)
    (claimed,) = alerts.claim_due(store, T0, 10, lease_s=60)
    assert alert_lookup.work_waiting(store, T0 + 1) == (False, False)  # leased
    assert alert_lookup.work_waiting(store, T0 + 61_000_000) == (False, True)  # lapsed
    alerts.mark_sent(store, [claimed.id], T0 + 2)
    assert alert_lookup.work_waiting(store, T0 + 61_000_000) == (False, False)

