"""POST /ingest/deploys, on one collector per module and store, a project per test
(`module_projects`)."""

from __future__ import annotations

import pytest

from tests.support.server import Projects


def test_deploy_with_every_field_is_stored(module_projects: Projects) -> None:
    server = module_projects.take()
    sent = {"git_sha": "9f1c2ab", "version": "1.4.2", "env": "production",
            "deployer": "ci-bot", "description": "Faster checkout",
            "timestamp": "2026-11-21T08:30:00Z"}
    response = server.post("/ingest/deploys", sent)
    assert response.status_code == 202
    assert response.content == b""
    (row,) = server.project_rows("deploys")
    assert (row.git_sha, row.version, row.env, row.deployer, row.description) == (
        "9f1c2ab", "1.4.2", "production", "ci-bot", "Faster checkout")
    assert row.ts_us == 1_795_249_800_000_000


def test_only_git_sha_is_required_and_time_defaults_to_receipt(module_projects: Projects
                                                                ) -> None:
    server = module_projects.take()
    assert server.post("/ingest/deploys", {"git_sha": "abc123"}).status_code == 202
    (row,) = server.project_rows("deploys")
    assert row.version is None and row.env is None
    assert abs(row.ts_us - row.received_us) < 5_000_000


@pytest.mark.parametrize(("body", "field", "problem"), [
    ({}, "git_sha", "is required"),
    ({"git_sha": ""}, "git_sha", "must not be empty"),
    ({"git_sha": 123}, "git_sha", "must be a string"),
    ({"git_sha": "a" * 129}, "git_sha", "at most 128"),
    ({"git_sha": "abc", "timestamp": "2026-13-01T00:00:00Z"}, "timestamp", "ISO 8601"),
    ({"git_sha": "abc", "env": ["prod"]}, "env", "must be a string"),
    ({"git_sha": "abc", "version": 2}, "version", "must be a string"),
    ({"git_sha": "abc", "service": 7}, "service", "must be a string"),
    ({"git_sha": "abc", "service": "s" * 201}, "service", "at most 200 characters, got 201"),
])
def test_invalid_deploy_is_a_400_naming_the_field(module_projects: Projects,
                                                  body: dict[str, object], field: str,
                                                  problem: str) -> None:
    server = module_projects.take()
    response = server.post("/ingest/deploys", body)
    assert response.status_code == 400
    assert any(d["field"] == field and problem in d["error"]
               for d in response.json()["details"]), response.json()
    assert server.project_rows("deploys") == []


@pytest.mark.parametrize(("sent", "stored"), [
    ("checkout", "checkout"), ("s" * 200, "s" * 200), ("", None), (None, None)])
def test_a_deploy_may_name_its_service(module_projects: Projects, sent: str | None,
                                       stored: str | None) -> None:
    server = module_projects.take()
    sha = f"svc-{len(sent) if sent is not None else 'none'}"
    body = {"git_sha": sha, **({} if sent is None else {"service": sent})}
    assert server.post("/ingest/deploys", body).status_code == 202
    (row,) = server.project_rows("deploys", "service")
    assert row.service == stored
