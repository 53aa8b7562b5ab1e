"""storage/queries/facets.py, the error list's facet filters, the groups of a release
and the event detail's new fields, against a real store on SQLite and PostgreSQL.
Records go in through the real processors and writer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from model.records import Deploy
from storage import keys
from storage.groups import status
from storage.queries import deploys as dq
from storage.queries import errors as eq
from storage.queries import events as evq
from storage.queries import facets as fq
from storage.store import Store
from tests.storage.test_queries import NOW, US, Db, err


@pytest.fixture
def db(db_url: str) -> Iterator[Db]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "facets")
        keys.ensure_project(conn, "elsewhere")
    yield Db(store, project)
    store.dispose()


def test_a_groups_distribution_counts_each_value_with_its_share(db: Db) -> None:
    db.ingest(errors=[
        err("a", NOW - 50, environment="prod", release="1.0", tags={"browser": "Firefox"}),
        err("a", NOW - 40, environment="prod", release="1.1", tags={"browser": "Chrome"}),
        err("a", NOW - 30, environment="staging", release="1.1", level="warning",
            tags={"browser": "Firefox", "os": "Linux"}),
        err("a", NOW - 20, environment="prod"),
        err("b", NOW - 10, environment="dev")])
    facets = {f.name: f for f in fq.distribution(db.store, db.project, "a")}
    assert list(facets) == ["environment", "release", "level", "browser", "os"]
    env = facets["environment"]
    assert (env.total, env.distinct, env.other) == (4, 2, 0)
    assert [(v.value, v.count, v.share) for v in env.values] == [
        ("prod", 3, 0.75), ("staging", 1, 0.25)]
    assert (env.values[0].first_seen_us, env.values[0].last_seen_us) == (
        (NOW - 50) * US, (NOW - 20) * US)
    browser = facets["browser"]
    assert [(v.value, v.count) for v in browser.values] == [("Firefox", 2), ("Chrome", 1)]
    top = fq.distribution(db.store, db.project, "a", top=1)[0]
    assert (top.name, len(top.values), top.other, top.distinct) == ("environment", 1, 1, 2)
    assert fq.distribution(db.store, db.project, "none") == []


def test_the_first_release_is_that_of_the_earliest_error_with_one(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 60), err("a", NOW - 50, release="2.0"),
                      err("a", NOW - 70, release="1.9")])
    db.ingest(errors=[err("a", NOW - 80, release="1.8"), err("b", NOW - 10)])
    assert fq.first_release(db.store, db.project, "a") == "1.8"
    assert fq.first_release(db.store, db.project, "b") is None


def test_the_error_list_filters_by_environment_release_and_service(db: Db) -> None:
    long = "r" * 250
    db.ingest(errors=[
        err("a", NOW - 50, environment="prod", release="1.0", service="web"),
        err("b", NOW - 40, environment="prod", release="1.1", service="worker"),
        err("c", NOW - 30, environment="staging", release=long),
        err("d", NOW - 20)])
    status.set_status(db.store, db.project, "b", "resolved")

    def listed(statuses: tuple[str, ...] = ("open", "resolved"), **facets: str) -> list[str]:
        page = eq.list_groups(db.store, db.project, statuses, facets=facets, now_us=NOW * US)
        return sorted(item.group.fingerprint for item in page.items)

    assert listed() == ["a", "b", "c", "d"]
    assert listed(environment="prod") == ["a", "b"]
    assert listed(environment="prod", service="worker") == ["b"]
    assert listed(release="1.0") == ["a"]
    assert listed(release=long) == ["c"]  # matched on the 200 characters stored
    assert listed(environment="nowhere") == []
    page = eq.list_groups(db.store, db.project, ["open"], facets={"environment": "prod"})
    assert (page.total, page.by_status) == (1, {"open": 1, "resolved": 1, "ignored": 0})


def test_labels_are_a_projects_distinct_values_sorted(db: Db) -> None:
    db.ingest(errors=[err("a", NOW, environment="prod", release="1.1", service="web",
                          tags={"os": "Linux"}),
                      err("b", NOW, environment="dev", release="1.0", service="web")])
    labels = fq.labels(db.store, db.project)
    assert labels == fq.Labels(["dev", "prod"], ["1.0", "1.1"], ["web"])
    assert fq.labels(db.store, db.project + 1) == fq.Labels([], [], [])


def test_a_release_lists_the_groups_first_seen_in_it(db: Db) -> None:
    db.ingest(errors=[err("old", NOW - 90, release="1.0"), err("old", NOW - 10, release="1.1"),
                      err("new", NOW - 20, release="1.1"), err("new", NOW - 5, release="1.2"),
                      err("bare", NOW - 100), err("bare", NOW - 15, release="1.1")])
    first_in = {r: [g.fingerprint for g in eq.groups_first_seen_in_release(
        db.store, db.project, r)] for r in ("1.0", "1.1", "1.2")}
    # "bare" was first seen without a release: its first release is 1.1.
    assert first_in == {"1.0": ["old"], "1.1": ["bare", "new"], "1.2": []}


def test_a_deploys_version_brings_its_release_groups(db: Db) -> None:
    db.ingest(deploys=[Deploy("abc", (NOW - 3600) * US, version="1.1"),
                       Deploy("abd", (NOW - 1800) * US)],
              errors=[err("new", NOW - 20, release="1.1")])
    with_version, without = sorted(dq.list_deploys(db.store, db.project, 0, (NOW + 1) * US),
                                   key=lambda d: d.git_sha)
    found = dq.correlate(db.store, db.project, with_version, 3600, NOW * US)
    assert [g.fingerprint for g in found.release_groups] == ["new"]
    assert dq.correlate(db.store, db.project, without, 3600, NOW * US).release_groups == []


def test_the_event_detail_reads_back_tags_level_exceptions_and_context(db: Db) -> None:
    exceptions = [{"type": "KeyError", "value": "'a'", "mechanism": {"handled": False},
                   "frames": [{"filename": "app.py", "lineno": 3, "in_app": True,
                               "pre_context": ["def f():"], "context_line": "  d['a']"}]}]
    context = {"user": {"id": "7", "ip_address": "10.0.0.1"},
               "breadcrumbs": [{"message": "clicked", "level": "info"}]}
    db.ingest(errors=[err("a", NOW, tags={"os": "Linux"}, level="fatal",
                          exceptions=exceptions, context=context, environment="prod")])
    shown = evq.event(db.store, db.project, "a")
    assert shown is not None
    assert (shown.tags, shown.level, shown.exceptions, shown.context) == (
        {"os": "Linux"}, "fatal", exceptions, context)
    assert (shown.environment, shown.unreadable) == ("prod", [])
    db.ingest(errors=[err("b", NOW)])
    bare = evq.event(db.store, db.project, "b")
    assert bare is not None
    assert (bare.tags, bare.level, bare.exceptions, bare.context) == (None, None, None, None)


def test_stored_values_of_another_shape_are_named_unreadable(db: Db) -> None:
    db.ingest(errors=[err("a", NOW)])
    with db.store.writer.begin() as conn:
        conn.execute(sa.text("UPDATE error_events SET tags = :t, exceptions = :e, "
                             "context = :c"), {"t": '{"n": 1}', "e": '{"x": 1}', "c": "[1]"})
    shown = evq.event(db.store, db.project, "a")
    assert shown is not None
    assert (shown.tags, shown.exceptions, shown.context) == (None, None, None)
    assert shown.unreadable == ["tags", "exceptions", "context"]
