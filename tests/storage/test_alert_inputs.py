"""storage/queries/alert_inputs.py on a real store (SQLite and PostgreSQL), errors
written by the real processors and writer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import select

from model.records import Batch, ErrorEvent
from processors.grouping import GroupingProcessor
from storage import keys, schema
from storage.alerts import outbox
from storage.groups import merge, status
from storage.queries import alert_inputs
from storage.store import Store
from storage.wire.batch import write_batches

NOW = 1_795_168_800
US = 1_000_000
MIN = 60


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = Store(db_url)
    s.upgrade()
    with s.writer.begin() as conn:
        keys.ensure_project(conn, "p")
    yield s
    s.dispose()


def ingest(store: Store, *errors: tuple[str, float, str | None]) -> None:
    batch = Batch(project_id=1, errors=[
        ErrorEvent(fingerprint=fp, exception_class="E", message="m", backtrace=[],
                   ts_us=int(ts * US), environment=env) for fp, ts, env in errors])
    batch = GroupingProcessor("grouping").process(batch)
    with store.writer.begin() as conn:
        write_batches(conn, [batch], NOW * US)


def test_busy_groups_are_those_that_can_have_enough_events_busiest_first(store: Store
                                                                         ) -> None:
    ingest(store, *[("a", NOW + i, None) for i in range(4)],
           *[("b", NOW + i, None) for i in range(7)],
           *[("muted", NOW + i, None) for i in range(9)],
           *[("stale", NOW - 3 * 3600 + i, None) for i in range(9)])
    status.set_status(store, 1, "muted", "ignored")
    busy = alert_inputs.busy_groups(store, 1, (NOW - 10 * MIN) * US, 3)
    assert [(g.fingerprint, g.recent) for g in busy] == [("b", 7), ("a", 4)]
    assert alert_inputs.busy_groups(store, 1, (NOW - 10 * MIN) * US, 7) == []


def test_event_count_takes_the_window_the_environment_and_stops_at_at_most(store: Store
                                                                           ) -> None:
    ingest(store, *[("a", NOW + i, "prod" if i % 2 else "dev") for i in range(10)])
    count = alert_inputs.event_count
    assert count(store, 1, "a", NOW * US, (NOW + 10) * US) == 10
    assert count(store, 1, "a", (NOW + 5) * US, (NOW + 10) * US) == 5
    assert count(store, 1, "a", NOW * US, (NOW + 10) * US, env="prod") == 5
    assert count(store, 1, "a", NOW * US, (NOW + 10) * US, at_most=3) == 3
    assert count(store, 1, "a", NOW * US, (NOW + 10) * US, service="api") == 0


def test_fact_times_finds_facts_by_key_long_ones_too(store: Store) -> None:
    long_key = "frequency:r:" + "f" * 300 + ":60"
    assert outbox.record_fact(store, 1, "frequency", "x", long_key, 7 * US, {})
    assert outbox.record_fact(store, 1, "frequency", "y", "frequency:r:y:60", 8 * US, {})
    assert alert_inputs.fact_times(store, 1, [long_key, "frequency:r:y:60", "nope"]) == {
        long_key: 7 * US, "frequency:r:y:60": 8 * US}
    assert alert_inputs.fact_times(store, 2, [long_key]) == {}


def group_id(store: Store, fingerprint: str) -> int:
    g = schema.error_groups
    with store.reader.connect() as conn:
        return int(conn.execute(select(g.c.id).where(g.c.fingerprint == fingerprint))
                   .scalar_one())


def test_a_merged_group_counts_in_its_target_and_follows_its_status(store: Store) -> None:
    # Neither has more than 5 events alone; merged, the target has 7.
    ingest(store, *[("target", NOW + i, None) for i in range(4)],
           *[("merged", NOW + i, None) for i in range(3)])
    since = (NOW - 10 * MIN) * US
    assert alert_inputs.busy_groups(store, 1, since, 5) == []
    merge.merge(store, 1, group_id(store, "target"), [group_id(store, "merged")])
    (busy,) = alert_inputs.busy_groups(store, 1, since, 5)
    assert (busy.fingerprint, busy.recent) == ("target", 7)
    assert busy.fingerprints == ("target", "merged")
    assert alert_inputs.event_count(store, 1, busy.fingerprints, NOW * US,
                                    (NOW + 10) * US) == 7
    # Ignoring the target silences the group merged into it as well.
    status.set_status(store, 1, "target", "ignored")
    assert alert_inputs.busy_groups(store, 1, since, 2) == []
