"""The alert evaluators against a real store, on SQLite and on PostgreSQL. Requests,
errors and deploys go in through the real processors and the real writer, as
ingest writes them; facts are read back from alert_facts."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import pytest
from sqlalchemy import select

from extensions.alerts.evaluate import Evaluator, dedupe_key
from model.records import Batch, Deploy, ErrorEvent, RequestMetric
from processors.classify import ClassifyProcessor
from processors.grouping import GroupingProcessor
from processors.reopen import ReopenProcessor
from processors.spanmetrics import SpanMetricsProcessor
from storage import keys, schema
from storage.groups import status as groups
from storage.store import Store
from storage.wire.batch import write_batches

NOW = 1_795_168_800  # 2026-11-20T10:00:00Z, on the hour
US = 1_000_000
MIN = 60
PROCESSORS = [ClassifyProcessor("classify"), SpanMetricsProcessor("spanmetrics"),
              GroupingProcessor("grouping"), ReopenProcessor("reopen")]


@dataclass(frozen=True)
class Rule:
    """The fields the evaluators read (rules.Rule, another helper's, has them)."""

    on: str
    project: str | None = None
    env: str | None = None
    service: str | None = None
    count: int | None = None
    minutes: int | None = None
    threshold: float | None = None
    p95_ms: float | None = None

    @property
    def rule_key(self) -> str:
        canonical = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


@dataclass
class Db:
    url: str
    store: Store
    project: int

    def ingest(self, **records: list[Any]) -> None:
        batch = Batch(project_id=self.project, **records)
        for processor in PROCESSORS:
            batch = processor.process(batch)
        with self.store.writer.begin() as conn:
            write_batches(conn, [batch], NOW * US)

    def facts(self, kind: str) -> list[Any]:
        f = schema.alert_facts
        with self.store.reader.connect() as conn:
            return list(conn.execute(select(f).where(f.c.kind == kind).order_by(f.c.id)))

    def evaluate(self, rules: list[Rule], now_s: float, **options: Any) -> int:
        return asyncio.run(Evaluator(self.store, rules, **options).run_once(int(now_s * US)))


@pytest.fixture
def db(db_url: str) -> Iterator[Db]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "shop")
    yield Db(db_url, store, project)
    store.dispose()


def req(ts_s: float, ms: float = 50.0, status: int = 200, service: str = "api",
        env: str = "prod") -> RequestMetric:
    return RequestMetric("GET", "/x", status, ms, int(ts_s * US), service, env)


def per_minute(start_s: int, end_s: int, n: int, every_nth_fails: int = 0,
               ms: float = 50.0, service: str = "api") -> list[RequestMetric]:
    """n requests in each minute of [start_s, end_s); every nth one a 500."""
    return [req(m + 1 + i % 50, ms, 500 if every_nth_fails and i % every_nth_fails == 0
                else 200, service)
            for m in range(start_s, end_s, MIN) for i in range(n)]


def err(fingerprint: str, ts_s: float, env: str | None = "prod") -> ErrorEvent:
    return ErrorEvent(fingerprint=fingerprint, exception_class="KeyError", message="gone",
                      backtrace=["a.py:1 in f"], ts_us=int(ts_s * US), environment=env)


def together(evaluators: list[Evaluator], now_us: int) -> int:
    """Run evaluators at the same moment, each on its own thread and connections."""
    barrier = threading.Barrier(len(evaluators))
    counts: list[int] = []

    def run(evaluator: Evaluator) -> None:
        barrier.wait()
        counts.append(evaluator.evaluate(now_us))

    threads = [threading.Thread(target=run, args=(e,)) for e in evaluators]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(counts) == len(evaluators)
    return sum(counts)


# deploy_worse

DEPLOY = NOW - 20 * MIN
WORSE = [Rule("deploy_worse")]


def test_a_deploy_followed_by_a_worse_error_rate_is_one_fact_however_often_judged(
        db: Db) -> None:
    db.ingest(requests=per_minute(DEPLOY - 20 * MIN, DEPLOY, 10)
              + per_minute(DEPLOY, NOW, 10, every_nth_fails=2),
              deploys=[Deploy("abc123", DEPLOY * US, version="2.0", env="prod")])
    assert db.evaluate(WORSE, NOW) == 1
    for later in range(1, 6):
        assert db.evaluate(WORSE, NOW + later * 30) == 0
    (fact,) = db.facts("deploy_worse")
    assert fact.dedupe_key.startswith("deploy_worse:")
    details = fact.details
    assert (details["git_sha"], details["version"], details["env"]) == ("abc123", "2.0", "prod")
    assert details["reasons"] and details["reasons"][0].startswith("error rate 0.0%")
    assert details["before"]["error_rate"] == 0.0 and details["after"]["error_rate"] == 0.5
    assert details["window_filled"] is True
    assert details["path"] == "/projects/shop/deploys?env=prod"


def test_two_evaluators_judging_one_deploy_at_once_record_one_fact(db: Db) -> None:
    db.ingest(requests=per_minute(DEPLOY - 20 * MIN, DEPLOY, 10)
              + per_minute(DEPLOY, NOW, 10, every_nth_fails=2),
              deploys=[Deploy("abc123", DEPLOY * US, env="prod")])
    stores = [Store(db.url) for _ in range(2)]
    try:
        assert together([Evaluator(s, WORSE) for s in stores], NOW * US) == 1
    finally:
        for s in stores:
            s.dispose()
    assert len(db.facts("deploy_worse")) == 1


def test_a_worse_deploy_is_judged_early_on_decisive_evidence(db: Db) -> None:
    deployed = NOW - 7 * MIN
    db.ingest(requests=per_minute(deployed - 20 * MIN, deployed, 10)
              + per_minute(deployed, NOW, 10, every_nth_fails=2),
              deploys=[Deploy("early", deployed * US, env="prod")])
    # 6 whole minutes on each side (the last one still settling), 60 requests each
    # (at least 2 x 20), half of them failing after: decisive before the window fills.
    assert db.evaluate(WORSE, NOW) == 1
    (fact,) = db.facts("deploy_worse")
    assert fact.details["git_sha"] == "early" and fact.details["window_filled"] is False
    assert fact.details["after"]["count"] == 60


def test_a_worse_deploy_on_little_traffic_waits_for_its_window(db: Db) -> None:
    deployed = NOW - 7 * MIN
    db.ingest(requests=per_minute(deployed - 20 * MIN, deployed, 2)
              + per_minute(deployed, deployed + 20 * MIN, 10, every_nth_fails=2),
              deploys=[Deploy("late", deployed * US, env="prod")])
    # Too few requests before it to judge (12), then enough to flag it worse (28 of
    # 14 minutes) but not to be decisive (fewer than 40) ...
    assert db.evaluate(WORSE, NOW) == 0
    assert db.evaluate(WORSE, deployed + 15 * MIN) == 0
    # ... until its 15 minutes have filled.
    assert db.evaluate(WORSE, deployed + 16 * MIN) == 1
    (fact,) = db.facts("deploy_worse")
    assert fact.details["window_filled"] is True
    assert (fact.details["before"]["count"], fact.details["after"]["count"]) == (30, 150)


def test_a_deploy_not_worse_is_judged_once_and_alerts_nothing(db: Db) -> None:
    db.ingest(requests=per_minute(DEPLOY - 20 * MIN, NOW, 10),
              deploys=[Deploy("fine", DEPLOY * US, env="prod")])
    assert db.evaluate(WORSE, NOW) == 0
    s = schema.alert_state
    with db.store.reader.connect() as conn:
        assert conn.execute(select(s.c.rule_key, s.c.state)).all() == [("deploy_worse", "ok")]
    assert db.facts("deploy_worse") == []


def test_deploy_rules_limited_to_an_environment_judge_only_its_deploys(db: Db) -> None:
    db.ingest(requests=per_minute(DEPLOY - 20 * MIN, DEPLOY, 10)
              + per_minute(DEPLOY, NOW, 10, every_nth_fails=2),
              deploys=[Deploy("abc123", DEPLOY * US, env="prod")])
    assert db.evaluate([Rule("deploy_worse", env="staging")], NOW) == 0
    assert db.evaluate([Rule("deploy_worse", project="elsewhere")], NOW) == 0
    assert db.evaluate([Rule("deploy_worse", project="shop", env="prod")], NOW) == 1


# frequency

OFTEN = Rule("frequency", count=5, minutes=10)


def test_frequency_fires_once_per_window(db: Db) -> None:
    db.ingest(errors=[err("loud", NOW + i) for i in range(6)]
              + [err("quiet", NOW + i) for i in range(5)])
    assert db.evaluate([OFTEN], NOW + MIN) == 1
    assert db.evaluate([OFTEN], NOW + 2 * MIN) == 0
    (fact,) = db.facts("frequency")
    assert fact.subject == "loud"
    assert fact.dedupe_key == dedupe_key("frequency", OFTEN.rule_key, "loud", NOW)
    assert (fact.details["count"], fact.details["more_than"]) == (6, 5)
    assert fact.details["rule_key"] == OFTEN.rule_key
    # The next window: the same six events (still within the last 10 minutes) were
    # counted already ...
    assert db.evaluate([OFTEN], NOW + 10 * MIN + 30) == 0
    # ... six new ones are a new fact.
    db.ingest(errors=[err("loud", NOW + 11 * MIN + i) for i in range(6)])
    assert db.evaluate([OFTEN], NOW + 12 * MIN) == 1
    assert db.evaluate([OFTEN], NOW + 13 * MIN) == 0
    assert [f.dedupe_key for f in db.facts("frequency")] == [
        dedupe_key("frequency", OFTEN.rule_key, "loud", t) for t in (NOW, NOW + 10 * MIN)]


def test_frequency_skips_ignored_groups_and_counts_only_the_rules_environment(
        db: Db) -> None:
    db.ingest(errors=[err("muted", NOW + i) for i in range(9)]
              + [err("mixed", NOW + i, env="prod" if i < 3 else "dev") for i in range(9)])
    groups.set_status(db.store, db.project, "muted", "ignored")
    assert db.evaluate([Rule("frequency", count=5, minutes=10, env="prod")], NOW + MIN) == 0
    assert db.evaluate([Rule("frequency", count=5, minutes=10, env="dev")], NOW + MIN) == 1
    (fact,) = db.facts("frequency")
    assert (fact.subject, fact.details["environment"]) == ("mixed", "dev")


def test_frequency_counts_only_the_last_minutes(db: Db) -> None:
    db.ingest(errors=[err("old", NOW - 30 * MIN + i) for i in range(9)]
              + [err("old", NOW + i) for i in range(3)])
    assert db.evaluate([OFTEN], NOW + MIN) == 0


# error_rate and latency

RATE = Rule("error_rate", threshold=0.1, minutes=5)
SLOW = Rule("latency", p95_ms=200, minutes=5, service="api")


def test_error_rate_fires_once_on_crossing_and_once_on_recovery(db: Db) -> None:
    db.ingest(requests=per_minute(NOW - 5 * MIN, NOW, 10, every_nth_fails=3)
              + per_minute(NOW, NOW + 5 * MIN, 10))
    assert db.evaluate([RATE], NOW + 10) == 1
    assert db.evaluate([RATE], NOW + 40) == 0
    assert db.evaluate([RATE], NOW + 3 * MIN) == 0  # 3 of 5 minutes healthy: 16%
    assert db.evaluate([RATE], NOW + 5 * MIN + 10) == 1
    assert db.evaluate([RATE], NOW + 5 * MIN + 40) == 0
    fired, recovered = db.facts("error_rate")
    assert (fired.subject, fired.details["state"]) == ("api", "firing")
    assert fired.details["value"] == pytest.approx(0.4)  # 4 of every 10 fail
    assert fired.details["threshold"] == 0.1
    assert (recovered.subject, recovered.details["state"]) == ("api", "recovered")
    assert recovered.details["value"] == 0.0
    assert fired.dedupe_key == dedupe_key("error_rate", RATE.rule_key, "api", NOW + 10)
    s = schema.alert_state
    with db.store.reader.connect() as conn:
        assert conn.execute(select(s.c.subject, s.c.state)).all() == [("api", "ok")]


def test_two_evaluators_crossing_at_once_record_one_fact(db: Db) -> None:
    db.ingest(requests=per_minute(NOW - 5 * MIN, NOW, 10, every_nth_fails=3))
    stores = [Store(db.url) for _ in range(3)]
    try:
        assert together([Evaluator(s, [RATE]) for s in stores], (NOW + 10) * US) == 1
    finally:
        for s in stores:
            s.dispose()
    assert len(db.facts("error_rate")) == 1


def test_too_few_requests_judge_nothing_and_no_requests_recover(db: Db) -> None:
    db.ingest(requests=per_minute(NOW - 5 * MIN, NOW - 4 * MIN, 10, every_nth_fails=2))
    assert db.evaluate([RATE], NOW + 10) == 0  # 10 requests: below the minimum
    db.ingest(requests=per_minute(NOW - 4 * MIN, NOW, 10, every_nth_fails=2))
    assert db.evaluate([RATE], NOW + 10) == 1
    assert db.evaluate([RATE], NOW + 20 * MIN) == 1  # silence: recovered
    assert [f.details["state"] for f in db.facts("error_rate")] == ["firing", "recovered"]


def test_latency_fires_per_service_over_its_p95(db: Db) -> None:
    db.ingest(requests=per_minute(NOW - 5 * MIN, NOW, 10, ms=450.0)
              + per_minute(NOW - 5 * MIN, NOW, 10, ms=450.0, service="web"))
    assert db.evaluate([SLOW], NOW + 10) == 1
    (fact,) = db.facts("latency")
    assert fact.subject == "api" and fact.details["value"] == pytest.approx(450, rel=0.01)
    assert fact.details["path"] == "/projects/shop/performance?service=api"
