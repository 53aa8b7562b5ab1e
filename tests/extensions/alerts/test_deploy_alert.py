"""A deploy followed by a worse error rate alerts once, through the collector: the
evaluator (evaluate.py) judges the deploy once its after-window has filled, records
one deploy_worse fact, and the sender delivers it (issue 13's "Tests" list)."""

from __future__ import annotations

import time
from collections.abc import Callable

from tests.extensions.alerts.test_delivery import (
    alerts_env,
    alerts_of,
    settled,
    wait_until,
)
from tests.support.alert_receiver import receiving
from tests.support.server import Server

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


def test_a_deploy_followed_by_a_worse_error_rate_alerts_once(
        db_url: str, start: Callable[..., Server]) -> None:
    # The deploy is 20 minutes old and its 10-minute after-window has filled: the
    # first evaluation judges it, later ones (every 0.2 s here) record nothing more.
    deploy_s = (time.time() // 60 - 20) * 60
    with receiving() as receiver:
        collector = start(db_url, env=alerts_env(
            receiver.url, "[{on: deploy_worse, destinations: [hook], env: production}]",
            evaluate_s="0.2", deploy_window_s=str(WINDOW_S)))
        before = requests_between(deploy_s - WINDOW_S, WINDOW_S // 60, failing=0.0)
        after = requests_between(deploy_s, WINDOW_S // 60, failing=0.2)
        for batch in (before, after):
            assert collector.post("/ingest/requests", {"requests": batch}).status_code == 202
        assert collector.post("/ingest/deploys", {
            "git_sha": "abc1234", "version": "shop@2.0.0", "env": "production",
            "timestamp": iso(deploy_s)}).status_code == 202
        wait_until(lambda: alerts_of(receiver, "deploy_worse"), "the deploy_worse alert",
                   collector)
        time.sleep(1.0)  # several more evaluations
        wait_until(lambda: settled(collector), "delivery", collector)
        (alert,) = alerts_of(receiver)
        assert alert["kind"] == "deploy_worse"
        assert alert["environment"] == "production"
        assert "error rate" in " ".join(alert["deploy"]["reasons"])
        assert collector.query("SELECT count(*) FROM alert_facts WHERE kind = 'deploy_worse'"
                               ) == [(1,)]


def test_a_deploy_of_another_service_is_not_blamed(
        db_url: str, start: Callable[..., Server]) -> None:
    # shop gets worse at the instant two deploys happen: the one naming shop alerts,
    # the one naming api (steady) does not.
    deploy_s = (time.time() // 60 - 20) * 60
    with receiving() as receiver:
        collector = start(db_url, env=alerts_env(
            receiver.url, "[{on: deploy_worse, destinations: [hook], env: production}]",
            evaluate_s="0.2", deploy_window_s=str(WINDOW_S)))
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
        wait_until(lambda: alerts_of(receiver, "deploy_worse"), "the deploy_worse alert",
                   collector)
        # Both judged (a verdict each) before looking at what was sent.
        wait_until(lambda: collector.query(
            "SELECT count(*) FROM alert_state WHERE rule_key = 'deploy_worse'") == [(2,)],
            "both verdicts", collector)
        wait_until(lambda: settled(collector), "delivery", collector)
        (alert,) = alerts_of(receiver)
        assert (alert["deploy"]["git_sha"], alert["service"]) == ("shop001", "shop")
        assert alert["title"].startswith("Deploy shop001 of shop made things worse")
