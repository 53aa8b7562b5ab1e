"""Merging error groups and undoing it (storage/groups/merge.py), on SQLite and PostgreSQL,
records in through the real processors and writer: the list's totals stay exact,
later errors of a merged fingerprint count in the target and follow its status, an
unmerge gives each group back its own counts, and retention keeps a target whose
merged groups are still seen."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storage import keys
from storage.audit.log import Actor
from storage.groups import merge, status
from storage.queries import culprit as cq
from storage.queries import errors as eq
from storage.queries import events as evq
from storage.queries import facets as fq
from storage.queries import members
from storage.store import Store
from tests.storage.retention.test_sweep_groups import Db as RetentionDb
from tests.storage.retention.test_sweep_groups import at, error
from tests.storage.test_queries import NOW, US, Db, err


@pytest.fixture
def db(db_url: str) -> Iterator[Db]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "merging")
        keys.ensure_project(conn, "other")
    yield Db(store, project)
    store.dispose()


def listing(d: Db, statuses: tuple[str, ...] = ("open",), **kw: object) -> dict[str, int]:
    page = eq.list_groups(d.store, d.project, statuses, now_us=NOW * US, **kw)  # type: ignore[arg-type]
    return {i.group.fingerprint: i.group.count for i in page.items}


def ids(d: Db) -> dict[str, int]:
    page = eq.list_groups(d.store, d.project, eq.STATUSES, now_us=NOW * US)
    return {i.group.fingerprint: i.group.id for i in page.items}


def seed(d: Db) -> dict[str, int]:
    d.ingest(errors=[err("a", NOW - 3000, user_id="u1", release="1.0", environment="prod"),
                     err("a", NOW - 2000, user_id="u2"),
                     err("b", NOW - 5000, cls="KeyError", message="no such key",
                         user_id="u1", release="0.9", environment="staging"),
                     err("c", NOW - 100), err("c", NOW - 90), err("c", NOW - 80)])
    return ids(d)


def test_a_merge_lists_one_group_with_the_members_totals(db: Db) -> None:
    g = seed(db)
    assert merge.merge(db.store, db.project, g["a"], [g["a"], g["b"]], actor=Actor.user(1, "ada"),
                       at_us=(NOW - 10) * US) == [g["b"]]
    assert listing(db) == {"a": 3, "c": 3}  # 6 errors sent, 6 counted
    page = eq.list_groups(db.store, db.project, ("open",), now_us=NOW * US)
    assert (page.total, page.by_status["open"]) == (2, 2)
    a = eq.get_group(db.store, db.project, g["a"])
    assert a is not None
    assert (a.count, a.first_seen_us, a.last_seen_us) == (
        3, (NOW - 5000) * US, (NOW - 2000) * US)
    (item,) = [i for i in page.items if i.group.fingerprint == "a"]
    assert sum(item.hourly_24h) == 3
    # Sorted by the totals: a's first seen is b's, older than c's.
    assert list(listing(db, sort="first_seen")) == ["c", "a"]
    assert eq.list_groups(db.store, db.project, ("open",), "first_seen", limit=1, offset=1,
                          now_us=NOW * US).items[0].group.first_seen_us == (NOW - 5000) * US
    fps = members.of_group(db.store, db.project, g["a"], "a")
    assert sorted(fps) == ["a", "b"]
    assert len(eq.occurrences(db.store, db.project, fps)) == 3
    assert sum(c for _, c in eq.trend(db.store, db.project, fps, NOW - 7200, NOW, 3600)) == 3
    assert {f.name: f.total for f in fq.distribution(db.store, db.project, fps)} == {
        "environment": 2, "release": 2}
    assert fq.first_release(db.store, db.project, fps) == "0.9"
    merged = {"a": ["a", "b"]}
    facts = fq.row_facts(db.store, db.project, ["a", "c"], merged)
    assert facts["a"] == fq.RowFacts(2, "0.9")  # u1 in both counts once
    assert sorted(fq.group_values(db.store, db.project, ["a"], members=merged)["a"][
        "environment"]) == ["prod", "staging"]
    assert set(cq.culprits(db.store, db.project, ["a"], merged)) == {"a"}
    event = evq.event(db.store, db.project, fps)
    assert event is not None and event.fingerprint == "a"  # the latest of either
    assert [m.id for m in members.merged_groups(db.store, db.project, g["a"])] == [g["b"]]
    history = eq.status_history(db.store, db.project, "a")
    assert [(h.reason, h.detail, h.actor) for h in history] == [
        ("merge", f"#{g['b']}", "ada")]
    assert [(h.reason, h.detail) for h in eq.status_history(db.store, db.project, "b")] == [
        ("merged into", f"#{g['a']}")]


def test_a_search_or_filter_matching_a_merged_group_finds_its_target(db: Db) -> None:
    g = seed(db)
    merge.merge(db.store, db.project, g["c"], [g["a"], g["b"]])
    assert listing(db) == {"c": 6}
    assert listing(db, search="no such key") == {"c": 6}  # b's message
    assert listing(db, search="keyerror") == {"c": 6}  # b's class
    assert listing(db, facets={"environment": "staging"}) == {"c": 6}
    assert listing(db, search="nothing like it") == {}


def test_later_errors_of_a_merged_fingerprint_count_in_the_target(db: Db) -> None:
    g = seed(db)
    merge.merge(db.store, db.project, g["a"], [g["b"], g["c"]])
    assert list(listing(db, sort="count")) == ["a"]
    db.ingest(errors=[err("b", NOW - 50), err("c", NOW - 40), err("a", NOW - 30)])
    assert listing(db) == {"a": 9}
    db.ingest(errors=[err("z", NOW - 20)] * 5)
    assert list(listing(db, sort="count")) == ["a", "z"]  # 9 over 5
    assert list(listing(db, sort="last_seen")) == ["z", "a"]
    a = eq.get_group(db.store, db.project, g["a"])
    assert a is not None and a.last_seen_us == (NOW - 30) * US


def test_unmerge_gives_each_group_back_its_own_counts(db: Db) -> None:
    g = seed(db)
    merge.merge(db.store, db.project, g["a"], [g["b"], g["c"]])
    db.ingest(errors=[err("b", NOW - 50)])
    assert merge.unmerge(db.store, db.project, g["b"], actor=Actor.user(1, "grace")) == g["a"]
    assert listing(db) == {"a": 5, "b": 2}
    assert merge.unmerge(db.store, db.project, g["c"]) == g["a"]
    assert listing(db) == {"a": 2, "b": 2, "c": 3}
    assert [(h.reason, h.detail, h.actor) for h in eq.status_history(
        db.store, db.project, "a")][1:] == [("unmerge", f"#{g['b']}", "grace"),
                                             ("merge", f"#{g['b']}, #{g['c']}", None)]
    with pytest.raises(merge.MergeError, match="not merged"):
        merge.unmerge(db.store, db.project, g["b"])
    assert merge.unmerge(db.store, db.project, 10**12) is None
    assert merge.unmerge(db.store, db.project + 1, g["b"]) is None


def test_merges_are_flat_and_refuse_what_they_cannot_do(db: Db) -> None:
    g = seed(db)
    merge.merge(db.store, db.project, g["b"], [g["a"]])
    merge.merge(db.store, db.project, g["c"], [g["b"]])  # a follows b into c
    assert listing(db) == {"c": 6}
    assert [m.id for m in members.merged_groups(db.store, db.project, g["c"])] == [g["a"], g["b"]]
    with pytest.raises(merge.MergeError, match="into itself"):
        merge.merge(db.store, db.project, g["c"], [g["c"]])
    with pytest.raises(merge.MergeError, match="at least two"):
        merge.merge(db.store, db.project, g["c"], [])
    with pytest.raises(merge.MergeError, match="merged into") as merged:
        merge.merge(db.store, db.project, g["a"], [g["c"]])
    assert not merged.value.missing
    with pytest.raises(merge.MergeError, match="no error group") as unknown:
        merge.merge(db.store, db.project, g["c"], [g["a"], 10**6])
    assert unknown.value.missing
    # Another project's ids name nothing there.
    with pytest.raises(merge.MergeError, match="no error group"):
        merge.merge(db.store, db.project + 1, g["c"], [g["a"]])
    assert listing(db) == {"c": 6}


def test_a_merged_groups_error_reopens_the_resolved_target_not_itself(db: Db) -> None:
    g = seed(db)
    merge.merge(db.store, db.project, g["a"], [g["b"]], at_us=(NOW - 70) * US)
    status.set_status(db.store, db.project, "a", "resolved", at_us=(NOW - 60) * US)
    assert listing(db, ("resolved",)) == {"a": 3}
    db.ingest(errors=[err("b", NOW - 50)])
    a = eq.get_group(db.store, db.project, g["a"])
    assert a is not None and (a.status, a.reopen_count, a.count) == ("open", 1, 4)
    assert [h.reason for h in eq.status_history(db.store, db.project, "a")][0] == "recurrence"
    b = eq.get_group(db.store, db.project, g["b"])
    assert b is not None and (b.status, b.reopen_count) == ("open", 0)
    # Its own status does not count while merged: a resolved source's errors leave an
    # open target as it is, and an ignored target stays ignored.
    status.set_status(db.store, db.project, "b", "resolved", at_us=(NOW - 45) * US)
    status.set_status(db.store, db.project, "a", "ignored")
    db.ingest(errors=[err("b", NOW - 40)])
    assert eq.get_group(db.store, db.project, g["a"]).status == "ignored"  # type: ignore[union-attr]
    assert eq.get_group(db.store, db.project, g["b"]).status == "resolved"  # type: ignore[union-attr]


def test_resolved_in_the_next_release_counts_the_merged_groups_releases(db: Db) -> None:
    g = seed(db)  # a saw 1.0, b 0.9
    merge.merge(db.store, db.project, g["a"], [g["b"]])
    status.set_status(db.store, db.project, "a", "resolved", at_us=(NOW - 60) * US,
                      next_release=True)
    a = eq.get_group(db.store, db.project, g["a"])
    assert a is not None and a.resolved_release == "1.0"
    db.ingest(errors=[err("b", NOW - 50, release="0.9")])  # a release it had seen
    assert eq.get_group(db.store, db.project, g["a"]).status == "resolved"  # type: ignore[union-attr]
    db.ingest(errors=[err("b", NOW - 40, release="1.1")])
    assert eq.get_group(db.store, db.project, g["a"]).status == "open"  # type: ignore[union-attr]


def test_a_snooze_counts_the_merged_groups_errors(db: Db) -> None:
    g = seed(db)
    merge.merge(db.store, db.project, g["a"], [g["b"]])
    status.set_status(db.store, db.project, "a", "ignored", snooze=status.Snooze(events=2))
    a = eq.get_group(db.store, db.project, g["a"])
    assert a is not None and a.snooze_count == 5  # 3 counted, with b's
    db.ingest(errors=[err("b", NOW - 50)])
    assert eq.get_group(db.store, db.project, g["a"]).status == "ignored"  # type: ignore[union-attr]
    db.ingest(errors=[err("b", NOW - 40)])
    assert eq.get_group(db.store, db.project, g["a"]).status == "open"  # type: ignore[union-attr]
    status.set_status(db.store, db.project, "a", "ignored",
                      snooze=status.Snooze(per_hour=6))
    db.ingest(errors=[err("a", NOW - 30), err("b", NOW - 29)])
    assert eq.get_group(db.store, db.project, g["a"]).status == "ignored"  # type: ignore[union-attr]
    # 7 this hour, a's and b's together (a's own: 3, b's: 4).
    db.ingest(errors=[err("b", NOW - 20)])
    assert eq.get_group(db.store, db.project, g["a"]).status == "open"  # type: ignore[union-attr]


def test_retention_keeps_a_target_while_a_merged_group_is_still_seen(store: Store) -> None:
    d = RetentionDb(store)
    d.send(error("old", at(40)), error("recent", at(35)), error("gone", at(45)))
    page = eq.list_groups(store, d.project, ("open",), now_us=at(0))
    g = {i.group.fingerprint: i.group.id for i in page.items}
    merge.merge(store, d.project, g["old"], [g["recent"]])
    d.send(error("recent", at(2)))
    outcome = d.sweep()
    # "old" was last seen 40 days ago, but "recent", merged into it, 2 days ago.
    assert d.group("old") is not None and d.group("gone") is None
    assert outcome.groups == 1
    assert d.of("error_events", "old") == 0  # its own occurrences aged out
    page = eq.list_groups(store, d.project, ("open",), now_us=at(0))
    assert {i.group.fingerprint: i.group.count for i in page.items} == {"old": 3}
    # A merged group whose occurrences aged out goes as any group, and its target,
    # then no longer kept, with it.
    d.sweep(now_s=NOW + 31 * 86_400)
    assert d.group("recent") is None and d.group("old") is None


def test_pages_order_by_the_totals_beyond_their_own_columns(db: Db) -> None:
    db.ingest(errors=[err("ancient", NOW - 1000), *[err(f"x{i}", NOW - 500 + 100 * i)
                                                   for i in range(1, 5)],
                      err("new", NOW - 10), err("new", NOW - 9)])
    g = ids(db)
    merge.merge(db.store, db.project, g["x1"], [g["new"]])  # the oldest, seen last now
    merge.merge(db.store, db.project, g["x4"], [g["ancient"]])  # the newest, first long ago

    def page(sort: str, limit: int, offset: int = 0) -> list[str]:
        return [i.group.fingerprint for i in eq.list_groups(
            db.store, db.project, ("open",), sort, limit, offset, NOW * US).items]

    assert page("last_seen", 1) == ["x1"] and page("last_seen", 2, 1) == ["x4", "x3"]
    assert page("first_seen", 1) == ["x3"] and page("first_seen", 2, 2) == ["x1", "x4"]
    assert page("count", 2) == ["x1", "x4"]  # 3 (with new's 2) and 2 (with ancient's)
