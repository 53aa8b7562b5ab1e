"""The error workflow (docs/dashboard.md): the list's search, bulk status changes
and who made each change; against a real store on SQLite and PostgreSQL, records in
through the real processors and writer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storage import keys
from storage.audit.log import Actor
from storage.groups import status
from storage.queries import errors as eq
from storage.queries import facets as fq
from storage.store import Store
from tests.storage.test_queries import NOW, US, Db, err


@pytest.fixture
def db(db_url: str) -> Iterator[Db]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "workflow")
    yield Db(store, project)
    store.dispose()


def listed(d: Db, search: str, statuses: tuple[str, ...] = ("open",)) -> list[str]:
    page = eq.list_groups(d.store, d.project, statuses, now_us=NOW * US, search=search)
    return sorted(item.group.fingerprint for item in page.items)


def test_search_finds_class_message_or_fingerprint_whatever_the_case(db: Db) -> None:
    db.ingest(errors=[
        err("fp-checkout", NOW - 50, cls="CheckoutError", message="card declined"),
        err("fp-report", NOW - 40, cls="ReportError", message="Disk 100% full"),
        err("fp-other", NOW - 30, cls="KeyError", message="missing_key")])
    assert listed(db, "checkout") == ["fp-checkout"]  # class, any case
    assert listed(db, "DECLINED") == ["fp-checkout"]  # message
    assert listed(db, "fp-oth") == ["fp-other"]  # fingerprint
    assert listed(db, "error") == ["fp-checkout", "fp-other", "fp-report"]
    # LIKE's wildcards are plain characters.
    assert listed(db, "100%") == ["fp-report"]
    assert listed(db, "%") == ["fp-report"]
    assert listed(db, "g_k") == ["fp-other"] and listed(db, "s_n") == []
    assert listed(db, "  ") == ["fp-checkout", "fp-other", "fp-report"]  # no search
    assert listed(db, "nothing like it") == []
    page = eq.list_groups(db.store, db.project, ("open",), now_us=NOW * US, search="report")
    assert (page.total, page.by_status["open"]) == (1, 1)


def test_a_status_change_records_who_made_it(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 50)])
    assert status.set_status(db.store, db.project, "a", "resolved", at_us=(NOW - 40) * US,
                             actor=Actor.user(1, "ada@example.com")) == "open"
    status.set_status(db.store, db.project, "a", "open", at_us=(NOW - 30) * US)
    history = eq.status_history(db.store, db.project, "a")
    assert [(h.to_status, h.reason, h.actor, h.at_us) for h in history] == [
        ("open", "user", None, (NOW - 30) * US),
        ("resolved", "user", "ada@example.com", (NOW - 40) * US)]


def test_bulk_changes_every_named_group_of_the_project_and_records_each(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 50), err("b", NOW - 40), err("c", NOW - 30)])
    ids = {i.group.fingerprint: i.group.id for i in eq.list_groups(
        db.store, db.project, ("open",), now_us=NOW * US).items}
    status.set_status(db.store, db.project, "b", "resolved")
    other = Db(db.store, db.project + 1000)  # a project with no such groups
    assert status.set_statuses(other.store, other.project, list(ids.values()),
                               "resolved") == 0
    changed = status.set_statuses(db.store, db.project, [ids["a"], ids["b"], ids["a"], 10**12],
                                  "resolved", actor=Actor.user(1, "grace"), at_us=(NOW - 5) * US)
    assert changed == 1  # b was resolved already; the unknown id names nothing
    assert listed(db, "", ("resolved",)) == ["a", "b"] and listed(db, "") == ["c"]
    assert [(h.to_status, h.actor, h.at_us) for h in eq.status_history(
        db.store, db.project, "a")] == [("resolved", "grace", (NOW - 5) * US)]
    a = eq.get_group(db.store, db.project, ids["a"])
    assert a is not None and a.resolved_us == (NOW - 5) * US
    assert status.set_statuses(db.store, db.project, [ids["a"], ids["c"]], "ignored") == 2
    assert listed(db, "", ("ignored",)) == ["a", "c"]
    a = eq.get_group(db.store, db.project, ids["a"])
    assert a is not None and a.resolved_us is None
    try:
        status.set_statuses(db.store, db.project, [ids["a"]], "gone")
        raise AssertionError("an unknown status was accepted")
    except ValueError as exc:
        assert "status must be one of" in str(exc)


def test_a_recurrence_reopens_without_a_resolution_time_and_without_an_actor(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 50)])
    status.set_status(db.store, db.project, "a", "resolved", at_us=(NOW - 40) * US,
                      actor=Actor.user(1, "ada"))
    db.ingest(errors=[err("a", NOW - 30)])
    (item,) = eq.list_groups(db.store, db.project, ("open",), now_us=NOW * US).items
    # The group page shows "Resolved <time>" from resolved_us: not beside "Open".
    assert (item.group.status, item.group.resolved_us, item.group.reopen_count) == (
        "open", None, 1)
    assert [(h.to_status, h.reason, h.actor) for h in eq.status_history(
        db.store, db.project, "a")] == [("open", "recurrence", None),
                                        ("resolved", "user", "ada")]


def test_rows_count_distinct_users_and_name_the_first_release(db: Db) -> None:
    db.ingest(errors=[
        err("a", NOW - 50, user_id="u1", release="2.0"),
        err("a", NOW - 45, user_id="u2"),
        err("a", NOW - 40, user_id="u1", release="2.1"),
        err("b", NOW - 30)])
    db.ingest(errors=[err("a", NOW - 60, user_id="u3", release="1.9"),
                      err("a", NOW - 20, user_id="u2")])
    facts = fq.row_facts(db.store, db.project, ["a", "b", "none"])
    assert facts["a"] == fq.RowFacts(3, "1.9")
    assert facts["b"] == facts["none"] == fq.RowFacts(0, None)
    assert fq.row_facts(db.store, db.project, []) == {}
    # Counted for the list, not shown among the group's facets.
    assert [f.name for f in fq.distribution(db.store, db.project, "a")] == ["release"]


def test_resolved_in_the_next_release_reopens_only_on_a_release_not_seen_by_then(db: Db
                                                                                 ) -> None:
    db.ingest(errors=[err("a", NOW - 90, release="1.0"), err("a", NOW - 80, release="1.1"),
                      err("b", NOW - 80)])
    status.set_status(db.store, db.project, "a", "resolved", at_us=(NOW - 70) * US,
                      actor=Actor.user(1, "ada"), next_release=True)
    # Plain resolve of a group without releases: any later error reopens it.
    status.set_status(db.store, db.project, "b", "resolved", at_us=(NOW - 70) * US,
                      next_release=True)

    def group(fp: str) -> eq.Group:
        (item,) = [i for i in eq.list_groups(db.store, db.project, eq.STATUSES,
                                             now_us=NOW * US).items
                   if i.group.fingerprint == fp]
        return item.group

    assert (group("a").status, group("a").resolved_release) == ("resolved", "1.1")
    assert group("b").resolved_release is None
    # The old releases still running (the current one and an older one), and an error
    # without a release: it stays resolved, but counts.
    db.ingest(errors=[err("a", NOW - 60, release="1.1"), err("a", NOW - 55, release="1.0"),
                      err("a", NOW - 50)])
    assert (group("a").status, group("a").count) == ("resolved", 5)
    db.ingest(errors=[err("b", NOW - 50)])
    assert group("b").status == "open"
    # An error of the next release reopens it, recorded as a recurrence.
    db.ingest(errors=[err("a", NOW - 40, release="1.2"), err("a", NOW - 39, release="1.1")])
    a = group("a")
    assert (a.status, a.resolved_us, a.resolved_release, a.reopen_count) == (
        "open", None, None, 1)
    assert [(h.to_status, h.reason) for h in eq.status_history(db.store, db.project, "a")] == [
        ("open", "recurrence"), ("resolved", "user")]
    # Resolved in the next release again: now 1.2 is the current one.
    status.set_status(db.store, db.project, "a", "resolved", at_us=(NOW - 30) * US,
                      next_release=True)
    db.ingest(errors=[err("a", NOW - 20, release="1.2")])
    assert (group("a").status, group("a").resolved_release) == ("resolved", "1.2")
    # A late report: an error of 1.3 from before the resolution. 1.3 was running by
    # then, so it is not a later release: its errors do not reopen the group; 1.4's do.
    db.ingest(errors=[err("a", NOW - 35, release="1.3")])
    db.ingest(errors=[err("a", NOW - 10, release="1.3")])
    assert group("a").status == "resolved"
    db.ingest(errors=[err("a", NOW - 5, release="1.4")])
    assert group("a").status == "open"


def _status(d: Db, fp: str) -> str:
    (item,) = [i for i in eq.list_groups(d.store, d.project, eq.STATUSES,
                                         now_us=NOW * US).items if i.group.fingerprint == fp]
    return item.group.status


def _snooze_ended(d: Db, fp: str) -> list[tuple[str, str, str]]:
    return [(h.from_status, h.to_status, h.reason)
            for h in eq.status_history(d.store, d.project, fp) if h.reason == "snooze ended"]


def test_snooze_until_n_more_events(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 90), err("a", NOW - 89)])
    status.set_status(db.store, db.project, "a", "ignored", actor=Actor.user(1, "ada"),
                      snooze=status.Snooze(events=3))
    db.ingest(errors=[err("a", NOW - 80), err("a", NOW - 79)])
    assert _status(db, "a") == "ignored" and _snooze_ended(db, "a") == []
    db.ingest(errors=[err("a", NOW - 70)])
    assert _status(db, "a") == "open"
    assert _snooze_ended(db, "a") == [("ignored", "open", "snooze ended")]
    # Ignored for good (no snooze): it never opens on its own.
    status.set_status(db.store, db.project, "a", "ignored")
    db.ingest(errors=[err("a", NOW - 60 + i) for i in range(5)])
    assert _status(db, "a") == "ignored"


def test_snooze_until_a_time(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 90)])
    status.set_status(db.store, db.project, "a", "ignored",
                      snooze=status.Snooze(until_us=(NOW - 50) * US))
    db.ingest(errors=[err("a", NOW - 80), err("a", NOW - 60)])
    assert _status(db, "a") == "ignored"
    db.ingest(errors=[err("a", NOW - 40)])
    assert _status(db, "a") == "open" and len(_snooze_ended(db, "a")) == 1


def test_snooze_until_more_than_n_events_an_hour(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 5 * 3600)])
    status.set_status(db.store, db.project, "a", "ignored",
                      snooze=status.Snooze(per_hour=3))
    # Three in one hour, three in the next (in two commits): never more than three.
    db.ingest(errors=[err("a", NOW - 3 * 3600 + i) for i in range(3)])
    db.ingest(errors=[err("a", NOW - 2 * 3600 + i) for i in range(2)])
    db.ingest(errors=[err("a", NOW - 2 * 3600 + 10)])
    assert _status(db, "a") == "ignored"
    db.ingest(errors=[err("a", NOW - 2 * 3600 + 20)])  # the fourth of that hour
    assert _status(db, "a") == "open" and len(_snooze_ended(db, "a")) == 1


def test_a_snooze_is_checked_and_cleared(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 90)])
    for bad in ({"events": 0}, {"per_hour": -1}, {"events": 10**13}):
        try:
            status.Snooze(**bad)  # type: ignore[arg-type]
            raise AssertionError(f"{bad} was accepted")
        except ValueError as exc:
            assert "must be a whole number" in str(exc)
    status.set_status(db.store, db.project, "a", "ignored", snooze=status.Snooze(events=1))
    status.set_status(db.store, db.project, "a", "open")
    status.set_status(db.store, db.project, "a", "ignored")  # plainly: the snooze is gone
    db.ingest(errors=[err("a", NOW - 80)])
    assert _status(db, "a") == "ignored"
