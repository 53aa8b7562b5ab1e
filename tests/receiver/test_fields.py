"""The value rules of receiver/fields.py at the real server's JSON doors: the time
range, params' depth and finite numbers, bounded durations (docs/sending-data.md, "Limits")."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from receiver.fields import value_problem
from tests.support.server import Projects, Server

RANGE = "must be between 1970-01-01T00:00:00Z and 2262-04-11T23:47:16.854775Z"
OUT_OF_RANGE = ["9999-12-31T23:59:59.999999Z", "0001-01-01T00:00:00+14:00",
                "1969-12-31T23:59:59.999999Z", "2262-04-11T23:47:16.854776Z"]


def error(**overrides: object) -> dict[str, object]:
    record: dict[str, object] = {"exception_class": "KeyError", "message": "m",
                                 "backtrace": [], "fingerprint": "f"}
    record.update(overrides)
    return record


def request_metric(**overrides: object) -> dict[str, object]:
    record: dict[str, object] = {"method": "GET", "route": "/", "status": 200,
                                 "duration_ms": 1.5}
    record.update(overrides)
    return record


def nested(levels: int) -> dict[str, Any]:
    """An object holding `levels` objects and arrays in turn (the outermost two are
    objects)."""
    value: Any = {"leaf": 1}
    for level in range(levels - 2):
        value = [value] if level % 2 else {"k": value}
    return {"top": value} if levels > 1 else value


def test_value_problem_measures_depth_and_finite_numbers() -> None:
    assert value_problem({"a": [1, {"b": "c"}]}) is None
    assert value_problem(nested(16)) is None
    assert value_problem(nested(17)) == "nested deeper than 16 levels"
    assert value_problem({"a": [1.5, float("inf")]}) == "must hold finite numbers only, got inf"
    assert value_problem(nested(100_000)) == "nested deeper than 16 levels"  # no recursion


@pytest.mark.parametrize("stamp", OUT_OF_RANGE)
@pytest.mark.parametrize(("path", "body", "field"), [
    ("/ingest/errors", error, "timestamp"),
    ("/ingest/deploys", lambda **kw: {"git_sha": "abc", **kw}, "timestamp"),
    ("/ingest/requests", lambda **kw: {"requests": [request_metric(**kw)]},
     "requests[0].timestamp"),
])
def test_timestamps_outside_the_range_are_a_400_naming_the_field(
        shared_server: Server, stamp: str, path: str, body: Any, field: str) -> None:
    response = shared_server.post(path, body(timestamp=stamp))
    assert response.status_code == 400, response.text
    assert {"field": field, "error": f"{RANGE}, got {stamp!r}"} in response.json()["details"]


def test_the_ends_of_the_range_are_kept(sqlite_server: Server) -> None:
    for stamp in ("1970-01-01T00:00:00Z", "2262-04-11T23:47:16.854775Z",
                  "2262-04-12T01:47:16.854775+02:00"):
        assert sqlite_server.post("/ingest/errors", error(timestamp=stamp)).status_code == 202
    assert sorted(r.ts_us for r in sqlite_server.query("SELECT ts_us FROM error_events")) == [
        0, 9_223_372_036_854_775, 9_223_372_036_854_775]


@pytest.mark.parametrize(("params", "problem"), [
    (nested(17), "nested deeper than 16 levels"),
    (nested(100), "nested deeper than 16 levels"),
    ({"x": 1e400}, "must hold finite numbers only, got inf"),
    ({"x": [1, {"y": -1e400}]}, "must hold finite numbers only, got -inf"),
])
def test_params_too_deep_or_not_finite_reject_the_item_alone(
        module_projects: Projects, params: dict[str, Any], problem: str) -> None:
    server = module_projects.take()
    body = json.dumps({"errors": [error(fingerprint="bad", params=params),
                                  error(fingerprint="good", params=nested(16))]})
    raw = body.replace("Infinity", "1e400")  # json.dumps writes inf as Infinity
    response = requests.post(server.base + "/ingest/errors/batch", data=raw.encode(),
                             headers=server.headers(), timeout=30)
    assert response.status_code == 202, response.text
    assert response.json()["rejected_items"] == [
        {"index": 0, "details": [{"field": "errors[0].params", "error": problem}]}]
    assert [r.fingerprint for r in server.project_rows("error_events", "fingerprint")] == [
        "good"]


def test_params_nested_600_levels_are_refused_with_the_body(shared_server: Server) -> None:
    raw = json.dumps(error(params=nested(600)))
    response = requests.post(shared_server.base + "/ingest/errors", data=raw.encode(),
                             headers=shared_server.headers(), timeout=30)
    assert response.status_code == 400
    assert response.json()["details"] == [{"field": "body",
                                           "error": "nested deeper than 128 levels"}]


def test_a_duration_beyond_the_time_range_is_refused(sqlite_server: Server) -> None:
    response = sqlite_server.post("/ingest/requests", {"requests": [
        request_metric(duration_ms=1e308), request_metric(duration_ms=9_223_372_036_854.0)]})
    assert response.status_code == 202
    (rejected,) = response.json()["rejected_items"]
    assert rejected["details"][0]["field"] == "requests[0].duration_ms"
    (row,) = sqlite_server.query("SELECT count, duration_sum_ms FROM request_rollups")
    assert tuple(row) == (1, 9_223_372_036_854.0)
