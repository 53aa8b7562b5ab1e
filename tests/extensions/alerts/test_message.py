"""Alerts built from facts: a stable id, words for every kind, the dashboard link, and
the webhook's JSON (schema 1: every key always present, the same bytes every time)."""

from __future__ import annotations

import hashlib
import json

from extensions.alerts.message import Digest, alert_id, webhook_body
from tests.extensions.alerts.facts import AT_US, Fact, alert, alerts, new_group

ALERT_KEYS = {"schema", "type", "id", "kind", "project", "title", "summary", "subject",
              "group", "deploy", "monitor", "state", "counts", "first_seen", "last_seen",
              "environment", "release", "service", "link", "details"}


def test_the_id_is_a_hash_of_project_and_dedupe_key() -> None:
    a = alert()
    assert a.id == hashlib.sha256(b"1:new_group:" + b"f" * 32).hexdigest()[:32]
    assert a.id == alert_id(1, "new_group:" + "f" * 32)
    assert alert(new_group(project_id=2)).id != a.id


def test_a_new_group_alert_names_the_error_and_where() -> None:
    a = alert()
    assert a.title == "New error: KeyError: 'sku'"
    assert a.summary == "First seen in production, on checkout, release 1.4.2."
    assert (a.environment, a.service, a.release) == ("production", "checkout", "1.4.2")
    assert a.link == "https://sounding.example.com/projects/shop/errors/12"
    assert a.first_seen_us == a.last_seen_us == AT_US


def test_without_a_public_url_there_is_no_link() -> None:
    assert alert(public_url=None).link is None


def test_the_link_quotes_the_project_name() -> None:
    assert alert(project="a b/c").link == \
        "https://sounding.example.com/projects/a%20b%2Fc/errors/12"


def test_client_text_is_one_line_and_bounded() -> None:
    a = alert(new_group(message="line one\nline two\r\n" + "x" * 1000))
    assert "\n" not in a.title and "\r" not in a.title
    assert len(a.title) == 200 and a.title.endswith("…")


def test_every_kind_has_its_words_and_link() -> None:
    deploy = Fact(1, "deploy_worse", "42", "deploy_worse:42", AT_US,
                  {"git_sha": "0123456789abcdef", "env": "production",
                   "reasons": ["error rate 1.0% -> 9.0%", "p95 120 ms -> 480 ms"]})
    a = alert(deploy)
    assert a.title == "Deploy 0123456789ab made things worse in production"
    assert a.summary == "error rate 1.0% -> 9.0%; p95 120 ms -> 480 ms."
    assert a.link == "https://sounding.example.com/projects/shop/deploys?env=production"

    rate = Fact(1, "error_rate", "checkout", "error_rate:k:checkout:1", AT_US,
                {"service": "checkout", "threshold": 0.05, "value": 0.125, "minutes": 5,
                 "state": "firing"})
    a = alert(rate)
    assert a.title == "Error rate of checkout above 5.0%: 12.5%"
    assert a.link == "https://sounding.example.com/projects/shop/performance?service=checkout"
    recovered = alert(Fact(1, "error_rate", "checkout", "error_rate:k:checkout:2", AT_US,
                           {"service": "checkout", "value": 0.01, "state": "recovered"}))
    assert recovered.title == "Error rate of checkout recovered: 1.0%"

    latency = alert(Fact(1, "latency", "api", "latency:k:api:1", AT_US,
                         {"p95_ms": 500, "value": 812.5, "minutes": 10}))
    assert latency.title == "p95 latency of api above 500 ms: 812.5 ms"

    frequency = alert(Fact(1, "frequency", "f" * 32, "frequency:k:fff:0", AT_US,
                           {"exception_class": "KeyError", "count": 57, "threshold": 50,
                            "minutes": 5, "flag": True}))
    assert frequency.title == "57 events in 5 min: KeyError"
    assert frequency.counts == {"count": 57, "threshold": 50, "minutes": 5}

    regression = alert(Fact(1, "regression", "f" * 32, "regression:fff:1", AT_US,
                            {"exception_class": "KeyError", "reopen_count": 1}))
    assert regression.title == "Regression: KeyError"
    assert regression.link == "https://sounding.example.com/projects/shop/errors"

    test = alert(Fact(1, "test", "ops-hook", "test:1234", AT_US, {}))
    assert test.title == "Test alert from Sounding"


def test_the_webhook_json_has_every_schema_key() -> None:
    document = json.loads(webhook_body(alert()))
    assert set(document) == ALERT_KEYS
    assert document["schema"] == 1 and document["type"] == "alert"
    assert document["kind"] == "new_group"
    assert document["project"] == {"id": 1, "name": "shop"}
    assert document["group"] == {"fingerprint": "f" * 32, "id": 12,
                                 "exception_class": "KeyError", "message": "'sku'"}
    assert document["deploy"] is None and document["state"] is None
    assert document["first_seen"] == document["last_seen"] == "2026-01-02T03:04:05.000006Z"
    assert document["link"] == "https://sounding.example.com/projects/shop/errors/12"


def test_a_deploy_alert_carries_the_deploy() -> None:
    document = json.loads(webhook_body(alert(Fact(
        1, "deploy_worse", "42", "deploy_worse:42", AT_US,
        {"git_sha": "abc", "version": "2.0", "environment": "staging", "reasons": ["x"]}))))
    assert set(document) == ALERT_KEYS
    assert document["group"] is None
    assert document["deploy"] == {"id": "42", "git_sha": "abc", "version": "2.0",
                                  "environment": "staging", "reasons": ["x"]}


def test_the_same_alert_is_the_same_bytes() -> None:
    assert webhook_body(alert()) == webhook_body(alert())


def test_a_digest_lists_every_alert() -> None:
    digest = Digest(alerts(250), more=3)
    document = json.loads(webhook_body(digest))
    assert set(document) == {"schema", "type", "id", "count", "more", "alerts"}
    assert document["type"] == "digest" and document["count"] == 253
    assert document["more"] == 3 and document["id"] == digest.id
    assert [a["subject"] for a in document["alerts"]] == [f"{i:032x}" for i in range(250)]
    assert all(set(a) == ALERT_KEYS for a in document["alerts"])
