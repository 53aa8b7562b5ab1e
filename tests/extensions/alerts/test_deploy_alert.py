"""A deploy followed by a worse error rate alerts once, through the collector: the
evaluator (evaluate.py) judges the deploy once its after-window has filled, records
one deploy_worse fact, and the sender delivers it (issue 13's "Tests" list)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.extensions.alerts.test_delivery import (
    alerts_env,
    alerts_of,
    settled,
    wait_until,
)
from tests.support.alert_receiver import AlertReceiver, receiving
from tests.support.server import Projects, Server, collectors, project_keys

WINDOW_S = 600


def iso(ts_s: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts_s))


def requests_between(start_s: float, minutes: int, failing: float) -> list[dict[str, object]]:
    """30 requests a minute for `minutes` from `start_s`, `failing` of them 500s."""
    out: list[dict[str, object]] = []
    for minute in range(minutes):
        for i in range(30):
            out.append({"method": "GET", "route": "/checkout", "duration_ms": 20.0,
                        "status": 500 if i < failing * 30 else 200, "env": "production",
                        "service": "shop", "timestamp": iso(start_s + minute * 60 + i)})
    return out


@pytest.fixture(scope="module")
def receiver(module_db_url: str) -> Iterator[AlertReceiver]:
    """The receiver of the module's collector on this store (`deploy_projects`): one per
    store, as both collectors name their projects alike."""
    with receiving() as hook:
        yield hook


@pytest.fixture(scope="module")
def deploy_projects(module_db_url: str, tmp_path_factory: pytest.TempPathFactory,
                    receiver: AlertReceiver) -> Iterator[Projects]:
    """One collector per module and store judging deploys every 0.2 s, handing each
    test a project of its own (two, one a test: the evaluator goes through every project
    at each turn). Each test reads its project's alerts, facts and verdicts."""
    with collectors(tmp_path_factory.mktemp("deploys")) as start:
        yield Projects(start(module_db_url, keys=project_keys(2), env=alerts_env(
            receiver.url, "[{on: deploy_worse, destinations: [hook], env: production}]",
            evaluate_s="0.2", deploy_window_s=str(WINDOW_S))))


def alerts_to(receiver: AlertReceiver, collector: Server, kind: str | None = None
              ) -> list[dict[str, Any]]:
    """The alerts of the collector's project."""
    return [a for a in alerts_of(receiver, kind) if a["project"]["name"] == collector.project]


def test_a_deploy_followed_by_a_worse_error_rate_alerts_once(
        deploy_projects: Projects, receiver: AlertReceiver) -> None:
    # The deploy is 20 minutes old and its 10-minute after-window has filled: the
    # first evaluation judges it, later ones (every 0.2 s here) record nothing more.
    deploy_s = (time.time() // 60 - 20) * 60
    collector = deploy_projects.take()
    before = requests_between(deploy_s - WINDOW_S, WINDOW_S // 60, failing=0.0)
    after = requests_between(deploy_s, WINDOW_S // 60, failing=0.2)
    for batch in (before, after):
        assert collector.post("/ingest/requests", {"requests": batch}).status_code == 202
    assert collector.post("/ingest/deploys", {
        "git_sha": "abc1234", "version": "shop@2.0.0", "env": "production",
        "timestamp": iso(deploy_s)}).status_code == 202
    wait_until(lambda: alerts_to(receiver, collector, "deploy_worse"), "the deploy_worse alert",
               collector)
    time.sleep(1.0)  # several more evaluations
    wait_until(lambda: settled(collector), "delivery", collector)
    (alert,) = alerts_to(receiver, collector)
    assert alert["kind"] == "deploy_worse"
    assert alert["environment"] == "production"
    assert "error rate" in " ".join(alert["deploy"]["reasons"])
    assert collector.query("SELECT count(*) FROM alert_facts WHERE project_id = :p AND "
                           "kind = 'deploy_worse'", p=collector.project_id()) == [(1,)]


def test_a_deploy_of_another_service_is_not_blamed(
        deploy_projects: Projects, receiver: AlertReceiver) -> None:
    # shop gets worse at the instant two deploys happen: the one naming shop alerts,
    # the one naming api (steady) does not.
    deploy_s = (time.time() // 60 - 20) * 60
    collector = deploy_projects.take()
    steady = [{**r, "service": "api", "route": "/pay"}
              for r in requests_between(deploy_s - WINDOW_S, 2 * WINDOW_S // 60, 0.0)]
    before = requests_between(deploy_s - WINDOW_S, WINDOW_S // 60, failing=0.0)
    after = requests_between(deploy_s, WINDOW_S // 60, failing=0.2)
    for batch in (steady, before, after):
        assert collector.post("/ingest/requests", {"requests": batch}).status_code == 202
    for sha, service in (("api0001", "api"), ("shop001", "shop")):
        assert collector.post("/ingest/deploys", {
            "git_sha": sha, "env": "production", "service": service,
            "timestamp": iso(deploy_s)}).status_code == 202
    wait_until(lambda: alerts_to(receiver, collector, "deploy_worse"), "the deploy_worse alert",
               collector)
    # Both judged (a verdict each) before looking at what was sent.
    wait_until(lambda: collector.query(
        "SELECT count(*) FROM alert_state WHERE project_id = :p AND "
        "rule_key = 'deploy_worse'", p=collector.project_id()) == [(2,)],
        "both verdicts", collector)
    wait_until(lambda: settled(collector), "delivery", collector)
    (alert,) = alerts_to(receiver, collector)
    assert (alert["deploy"]["git_sha"], alert["service"]) == ("shop001", "shop")
    assert alert["title"].startswith("Deploy shop001 of shop made things worse")
