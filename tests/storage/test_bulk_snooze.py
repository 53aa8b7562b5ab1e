"""Snoozing several groups at once (storage/groups/status.py, set_statuses with a Snooze): one
transaction, every change recorded with who made it, each group's "more events"
counted from its own count; on SQLite and PostgreSQL, records in through the real
processors and writer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storage import keys
from storage.audit.log import Actor
from storage.groups import status
from storage.queries import errors as eq
from storage.store import Store
from tests.storage.test_queries import NOW, US, Db, err


@pytest.fixture
def db(db_url: str) -> Iterator[Db]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "bulk-snooze")
    yield Db(store, project)
    store.dispose()


def group(d: Db, fp: str) -> eq.Group:
    (item,) = [i for i in eq.list_groups(d.store, d.project, eq.STATUSES,
                                         now_us=NOW * US).items if i.group.fingerprint == fp]
    return item.group


def history(d: Db, fp: str) -> list[tuple[str, str, str, str | None]]:
    return [(h.from_status, h.to_status, h.reason, h.actor)
            for h in eq.status_history(d.store, d.project, fp)]


def test_each_group_wakes_after_its_own_n_more_events(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 90), err("b", NOW - 90), err("b", NOW - 89),
                      err("b", NOW - 88)])
    ids = [group(db, "a").id, group(db, "b").id]
    changed = status.set_statuses(db.store, db.project, ids, "ignored", actor=Actor.user(1, "ada"),
                                  at_us=(NOW - 80) * US, snooze=status.Snooze(events=2))
    assert changed == 2
    assert (group(db, "a").snooze_count, group(db, "b").snooze_count) == (3, 5)
    assert history(db, "a") == history(db, "b") == [("open", "ignored", "user", "ada")]
    db.ingest(errors=[err("a", NOW - 70), err("b", NOW - 70)])
    assert (group(db, "a").status, group(db, "b").status) == ("ignored", "ignored")
    db.ingest(errors=[err("a", NOW - 60), err("b", NOW - 60)])
    # Counts kept counting while snoozed; the second more event ends both snoozes.
    assert (group(db, "a").count, group(db, "b").count) == (3, 5)
    for fp in ("a", "b"):
        g = group(db, fp)
        assert (g.status, g.snooze_count, g.snooze_until_us) == ("open", None, None)
        assert history(db, fp)[0] == ("ignored", "open", "snooze ended", None)


def test_ignored_groups_are_snoozed_too_and_others_left_alone(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 90), err("b", NOW - 90), err("c", NOW - 90)])
    ids = {fp: group(db, fp).id for fp in "abc"}
    status.set_status(db.store, db.project, "a", "ignored", actor=Actor.user(1, "ada"))  # for good
    until = (NOW + 3600) * US
    changed = status.set_statuses(db.store, db.project, [ids["a"], ids["b"], 10**12],
                                  "ignored", actor=Actor.user(1, "grace"),
                                  snooze=status.Snooze(until_us=until, per_hour=10))
    assert changed == 2  # the ignored one was snoozed, the unknown id names nothing
    for fp in ("a", "b"):
        assert (group(db, fp).snooze_until_us, group(db, fp).snooze_per_hour) == (until, 10)
    assert history(db, "a") == [("ignored", "ignored", "user", "grace"),
                                ("open", "ignored", "user", "ada")]
    assert group(db, "c").status == "open" and history(db, "c") == []
    # Another project's ids change nothing there.
    other = Db(db.store, db.project + 1000)
    assert status.set_statuses(other.store, other.project, list(ids.values()), "ignored",
                               snooze=status.Snooze(events=1)) == 0


def test_a_bad_bulk_snooze_writes_nothing(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 90)])
    a = group(db, "a").id
    with pytest.raises(ValueError, match="only an ignored group can be snoozed"):
        status.set_statuses(db.store, db.project, [a], "resolved",
                            snooze=status.Snooze(events=1))
    with pytest.raises(ValueError, match="until_us must be a time"):
        status.Snooze(until_us=-1)
    assert group(db, "a").status == "open" and history(db, "a") == []
