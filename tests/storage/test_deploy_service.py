"""A deploy naming a service (migration 0017): stored on both engines, and its
before/after comparison made over that service's requests only, one by one
(deploys.correlate) and all at once (deploys.correlate_all) alike."""

from __future__ import annotations

from sqlalchemy import select

from model.records import Deploy
from storage import schema
from storage.queries import deploys as dq
from tests.storage.test_queries import HOUR, MIN, NOW, US, Db, db, req  # noqa: F401

__all__ = ["db"]  # the fixture, used by name

AT = NOW - 30 * MIN  # the deploys' instant: 15 minutes compared on each side


def test_a_deploys_service_is_stored_and_listed(db: Db) -> None:
    db.ingest(deploys=[Deploy("a1", AT * US, env="prod", service="checkout"),
                       Deploy("b2", AT * US + 1, env="prod")])
    with db.store.reader.connect() as conn:
        stored = conn.execute(select(schema.deploys.c.git_sha, schema.deploys.c.service)
                              .order_by(schema.deploys.c.git_sha)).all()
    assert [tuple(r) for r in stored] == [("a1", "checkout"), ("b2", None)]
    listed = dq.list_deploys(db.store, db.project, 0, NOW * US)
    assert [(d.git_sha, d.service) for d in listed] == [("b2", None), ("a1", "checkout")]


def _slow_web_steady_api(db: Db) -> None:
    """web goes from 50 ms to 500 ms at AT; api stays at 100 ms throughout."""
    db.ingest(requests=[
        *[req("/w", AT - 15 * MIN + 20 * i, 50.0) for i in range(40)],
        *[req("/w", AT + 20 * i, 500.0) for i in range(40)],
        *[req("/a", AT - 15 * MIN + 10 * i, 100.0, service="api") for i in range(180)],
    ])


def test_a_deploy_of_one_service_is_not_blamed_for_anothers_slowdown(db: Db) -> None:
    _slow_web_steady_api(db)
    db.ingest(deploys=[Deploy("api1", AT * US, env="prod", service="api"),
                       Deploy("web1", AT * US, env="prod", service="web"),
                       Deploy("all1", AT * US, env="prod")])
    listed = dq.list_deploys(db.store, db.project, 0, NOW * US)
    one_by_one = {d.git_sha: dq.correlate(db.store, db.project, d, 15 * MIN, NOW * US)
                  for d in listed}
    api, web, every = one_by_one["api1"], one_by_one["web1"], one_by_one["all1"]
    assert (api.before.count, api.after.count) == (90, 90)
    assert not api.worse and api.scope == "service api in prod"
    assert (web.before.count, web.after.count) == (40, 40)
    assert web.worse and [r.split(" \u2192")[0] for r in web.reasons] == ["p95 latency 50 ms"]
    assert web.scope == "service web in prod"
    # Without a service, every service's requests: web's slowdown shows through.
    assert (every.before.count, every.after.count, every.scope) == (130, 130, "prod")
    assert every.worse
    together = dq.correlate_all(db.store, db.project, listed, 15 * MIN, NOW * US)
    assert together == [one_by_one[d.git_sha] for d in listed]


def test_a_service_without_requests_compares_nothing(db: Db) -> None:
    _slow_web_steady_api(db)
    db.ingest(deploys=[Deploy("g1", AT * US, env="prod", service="ghost")])
    listed = dq.list_deploys(db.store, db.project, 0, NOW * US)
    (c,) = dq.correlate_all(db.store, db.project, listed, 15 * MIN, NOW * US)
    assert (c.before.count, c.after.count, c.worse) == (0, 0, False)
    assert [c] == [dq.correlate(db.store, db.project, listed[0], 15 * MIN, NOW * US)]


def test_another_services_deploy_does_not_cut_the_comparison_short(db: Db) -> None:
    _slow_web_steady_api(db)
    db.ingest(deploys=[Deploy("web1", AT * US, env="prod", service="web"),
                       Deploy("api1", (AT + 5 * MIN) * US, env="prod", service="api"),
                       Deploy("any1", (AT + 10 * MIN) * US, env="prod")])
    listed = dq.list_deploys(db.store, db.project, 0, NOW * US)
    found = {c.deploy.git_sha: c for c in dq.correlate_all(db.store, db.project, listed,
                                                           HOUR, NOW * US)}
    assert found["web1"] == dq.correlate(db.store, db.project, found["web1"].deploy, HOUR,
                                         NOW * US)
    # web1 is cut by the deploy naming no service (10 minutes on), not by api's (5).
    assert (found["web1"].length_s, found["web1"].clipped_by) == (10 * MIN, ["next deploy"])
    assert (found["api1"].length_s, found["api1"].clipped_by) == (5 * MIN, ["next deploy"])
    # A deploy naming none is cut by every deploy to its environment.
    assert (found["any1"].length_s, found["any1"].clipped_by) == (5 * MIN,
                                                                  ["previous deploy"])
    assert [c == dq.correlate(db.store, db.project, c.deploy, HOUR, NOW * US)
            for c in found.values()] == [True, True, True]
