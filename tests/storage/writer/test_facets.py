"""Facets of error groups (storage/writer/facets.py) on SQLite and PostgreSQL: each
stored error counts once per facet value (environment, release, service, level, each
tag), with first/last seen; copies dropped as duplicates count nowhere, on one
collector or two."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from model.records import ErrorEvent
from storage import keys
from storage.store import Store
from tests.storage.writer.test_occurrences import (
    NS,
    T0,
    US,
    A,
    B,
    Db,
    exception,
    log,
    race_two_writers,
    span,
)

T0_US = T0 // US


@pytest.fixture
def db(db_url: str) -> Iterator[Db]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "shop")
    yield Db(store, project)
    store.dispose()


def facets(db: Db) -> dict[tuple[str, str], tuple[int, int, int]]:
    return {(r.facet, r.value): (int(r.count), int(r.first_seen_us), int(r.last_seen_us))
            for r in db.rows("SELECT facet, value, count, first_seen_us, last_seen_us "
                             "FROM error_group_facets")}


def error(ts_us: int = T0_US, fingerprint: str = "fp", **fields: Any) -> ErrorEvent:
    return ErrorEvent(fingerprint, "E", "m", [], ts_us, **fields)


def test_each_stored_error_counts_per_value_with_first_and_last_seen(db: Db) -> None:
    db.write(db.batch(errors=[
        error(T0_US + 5, environment="prod", release="1.2", service="shop", level="error",
              tags={"browser": "Firefox", "os": "Linux"}),
        error(T0_US + 1, environment="prod", release="1.3", tags={"browser": "Chrome"})]))
    db.write(db.batch(errors=[error(T0_US + 9, environment="prod", tags={"browser": "Firefox"})]))
    assert facets(db) == {
        ("environment", "prod"): (3, T0_US + 1, T0_US + 9),
        ("release", "1.2"): (1, T0_US + 5, T0_US + 5),
        ("release", "1.3"): (1, T0_US + 1, T0_US + 1),
        ("service", "shop"): (1, T0_US + 5, T0_US + 5),
        ("level", "error"): (1, T0_US + 5, T0_US + 5),
        ("browser", "Firefox"): (2, T0_US + 5, T0_US + 9),
        ("browser", "Chrome"): (1, T0_US + 1, T0_US + 1),
        ("os", "Linux"): (1, T0_US + 5, T0_US + 5)}
    assert {r[0] for r in db.rows("SELECT fingerprint FROM error_group_facets")} == {"fp"}


def test_a_field_overrides_a_tag_of_the_same_name(db: Db) -> None:
    db.write(db.batch(errors=[error(environment="prod",
                                    tags={"environment": "staging", "release": "9"})]))
    assert facets(db) == {("environment", "prod"): (1, T0_US, T0_US),
                          ("release", "9"): (1, T0_US, T0_US)}


def test_errors_without_labels_write_no_facets(db: Db) -> None:
    db.write(db.batch(errors=[error(), error(tags={}), error(environment="")]))
    assert facets(db) == {}
    assert len(db.events()) == 3


def test_groups_and_projects_are_counted_apart(db: Db) -> None:
    with db.store.writer.begin() as conn:
        other = keys.ensure_project(conn, "other")
    db.write(db.batch(errors=[error(fingerprint="a", release="1"),
                              error(fingerprint="b", release="1")]),
             db.batch(errors=[error(fingerprint="a", release="1")], project=other))
    assert sorted(tuple(r) for r in db.rows(
        "SELECT project_id, fingerprint, count FROM error_group_facets")) == [
        (db.project, "a", 1), (db.project, "b", 1), (other, "a", 1)]


def test_long_values_are_cut_and_nul_mended(db: Db) -> None:
    db.write(db.batch(errors=[error(release="r" * 300, tags={"k" * 250: "v\x00w"})]))
    assert facets(db) == {("release", "r" * 200): (1, T0_US, T0_US),
                          ("k" * 200, "v\ufffdw"): (1, T0_US, T0_US)}


ORIGIN = {("environment", "prod"), ("release", "1.2"), ("service", "shop")}


def test_a_copy_dropped_across_commits_counts_in_no_facet(db: Db) -> None:
    db.write(db.batch(spans=[span(A, (T0 + NS, exception(module="shop.errors.")))]))
    db.write(db.batch(logs=[log(A, T0 + 2 * NS, exception())]))
    assert {k: v[0] for k, v in facets(db).items()} == dict.fromkeys(ORIGIN, 1)


def test_copies_in_one_commit_count_once_and_others_count(db: Db) -> None:
    traces = db.batch(spans=[span(A, (T0 + NS, exception()))])
    logs = db.batch(logs=[log(A, T0 + 2 * NS, exception()), log(B, T0 + 3 * NS, exception())])
    db.write(traces, logs)
    db.write(logs)  # a retried logs request: nothing more
    assert facets(db) == dict.fromkeys(ORIGIN, (2, (T0 + NS) // US, (T0 + 3 * NS) // US))


@pytest.mark.postgres
def test_two_writers_at_once_count_one_copy(pg_url: str) -> None:
    db = race_two_writers(pg_url)
    assert facets(db) == dict.fromkeys(ORIGIN, (2, (T0 + NS) // US, (T0 + 3 * NS) // US))
    db.store.dispose()


def test_a_level_longer_than_its_column_is_cut_not_refused(db: Db) -> None:
    db.write(db.batch(errors=[error(level="warning-but-much-longer")]))
    assert db.rows("SELECT level FROM error_events") == [("warning-but-much",)]
    assert facets(db) == {("level", "warning-but-much"): (1, T0_US, T0_US)}
