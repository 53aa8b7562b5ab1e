"""POST /ingest/errors and /ingest/errors/batch against the real server."""

from __future__ import annotations

import json

import pytest
import requests

from tests.support.server import Projects, Server


def error(**overrides: object) -> dict[str, object]:
    record: dict[str, object] = {
        "exception_class": "ZeroDivisionError",
        "message": "division by zero",
        "backtrace": ["app.py:10 in divide", "app.py:3 in main"],
        "fingerprint": "zde-divide",
    }
    record.update(overrides)
    return record


@pytest.fixture
def server(module_projects: Projects) -> Server:
    """The module's collector (SQLite, then PostgreSQL), as a project of this test's own
    sees it."""
    return module_projects.take()


def test_single_error_is_stored_with_every_field(server: Server) -> None:
    sent = error(
        request_id="req-1", user_id="user-9", params={"a": 1, "nested": {"b": [1, 2]}},
        timestamp="2026-11-20T10:00:00.250Z",
        source_context={"file": "app.py", "lineno": 10, "context_line": "    return a / b",
                        "pre_context": ["def divide(a, b):"], "post_context": [""]})
    response = server.post("/ingest/errors", sent)
    assert response.status_code == 202
    assert response.content == b""
    (row,) = server.project_rows("error_events")
    assert row.exception_class == "ZeroDivisionError"
    assert row.message == "division by zero"
    assert _json(row.backtrace) == sent["backtrace"]
    assert _json(row.params) == {"a": 1, "nested": {"b": [1, 2]}}
    assert _json(row.source_context) == {
        "file": "app.py", "lineno": 10, "context_line": "    return a / b",
        "pre_context": ["def divide(a, b):"], "post_context": [""]}
    assert (row.request_id, row.user_id) == ("req-1", "user-9")
    assert row.ts_us == 1_795_168_800_250_000  # 2026-11-20T10:00:00.250Z


def test_environment_release_service_and_tags_are_stored_and_counted(server: Server) -> None:
    tags = {"browser": "Firefox", "os": "Linux", "environment": "a tag, not the field"}
    sent = error(environment="prod", release="2.4.1", service="checkout", tags=tags,
                 timestamp="2026-11-20T10:00:00Z")
    assert server.post("/ingest/errors", sent).status_code == 202
    assert server.post("/ingest/errors/batch", {"errors": [
        error(environment="staging", timestamp="2026-11-20T11:00:00Z"),
        error(fingerprint="other")]}).status_code == 202
    rows = server.project_rows("error_events", order_by="id")
    assert [(r.environment, r.release, r.service) for r in rows] == [
        ("prod", "2.4.1", "checkout"), ("staging", None, None), (None, None, None)]
    assert _json(rows[0].tags) == tags
    assert rows[1].tags is None and rows[0].level is None
    facets = {(r.fingerprint, r.facet, r.value): (r.count, r.first_seen_us, r.last_seen_us)
              for r in server.project_rows("error_group_facets")}
    ten, eleven = 1_795_168_800_000_000, 1_795_172_400_000_000
    assert facets == {
        ("zde-divide", "environment", "prod"): (1, ten, ten),
        ("zde-divide", "environment", "staging"): (1, eleven, eleven),
        ("zde-divide", "release", "2.4.1"): (1, ten, ten),
        ("zde-divide", "service", "checkout"): (1, ten, ten),
        ("zde-divide", "browser", "Firefox"): (1, ten, ten),
        ("zde-divide", "os", "Linux"): (1, ten, ten)}


def test_timestamp_defaults_to_receipt_and_offsets_are_honoured(server: Server) -> None:
    assert server.post("/ingest/errors", error(fingerprint="a")).status_code == 202
    assert server.post("/ingest/errors", error(
        fingerprint="b", timestamp="2026-11-20T12:00:00+02:00")).status_code == 202
    rows = {r.fingerprint: r for r in server.project_rows("error_events")}
    assert abs(rows["a"].ts_us - rows["a"].received_us) < 5_000_000
    assert rows["b"].ts_us == 1_795_168_800_000_000  # 10:00 UTC


@pytest.mark.parametrize(("body", "field", "problem"), [
    (error(exception_class=None), "exception_class", "is required"),
    (error(exception_class=""), "exception_class", "must not be empty"),
    (error(message=3), "message", "must be a string"),
    (error(backtrace="app.py:10"), "backtrace", "must be an array of strings"),
    (error(backtrace=["ok", 5]), "backtrace", "must be an array of strings"),
    (error(fingerprint=None), "fingerprint", "is required"),
    (error(fingerprint="x" * 256), "fingerprint", "at most 255"),
    (error(timestamp="yesterday"), "timestamp", "ISO 8601"),
    (error(timestamp=1700000000), "timestamp", "ISO 8601"),
    (error(params=[1, 2]), "params", "must be a JSON object"),
    (error(params="x=1"), "params", "must be a JSON object"),
    (error(user_id=42), "user_id", "must be a string"),
    (error(source_context={"lineno": 3, "context_line": "x"}), "source_context.file",
     "is required"),
    (error(source_context={"file": "a.py", "context_line": "x"}), "source_context.lineno",
     "is required"),
    (error(source_context={"file": "a.py", "lineno": 3}), "source_context.context_line",
     "is required"),
    (error(source_context={"file": "a.py", "lineno": "3", "context_line": "x"}),
     "source_context.lineno", "must be an integer"),
    (error(source_context={"file": "a.py", "lineno": 3, "context_line": "x",
                           "pre_context": "x"}), "source_context.pre_context",
     "array of strings"),
    (error(source_context="app.py:3"), "source_context", "must be a JSON object"),
    (error(environment=3), "environment", "must be a string"),
    (error(release="r" * 201), "release", "at most 200"),
    (error(service=["web"]), "service", "must be a string"),
    (error(tags=["a"]), "tags", "must be a JSON object"),
    (error(tags={"retries": 3}), "tags.retries", "must be a string, got integer"),
    (error(tags={"beta": True}), "tags.beta", "must be a string, got boolean"),
    (error(tags={"ok": "yes", "nested": {"a": "b"}}), "tags.nested", "got object"),
    (error(tags={"empty": ""}), "tags.empty", "1 to 200 characters"),
    (error(tags={"v": "x" * 201}), "tags.v", "1 to 200 characters, got 201"),
    (error(tags={"k" * 201: "x"}), "tags." + "k" * 64, "keys must be 1 to 200"),
    (error(tags={" ": "x"}), "tags. ", "keys must be 1 to 200"),
    (error(tags={f"k{i}": "x" for i in range(51)}), "tags", "at most 50 keys, got 51"),
])
def test_invalid_error_is_a_400_naming_the_field(shared_server: Server, body: object,
                                                  field: str, problem: str) -> None:
    before = shared_server.query("SELECT count(*) FROM error_events")[0][0]
    response = shared_server.post("/ingest/errors", body)
    assert response.status_code == 400
    payload = response.json()
    assert payload["error"]
    assert any(d["field"] == field and problem in d["error"] for d in payload["details"]), payload
    assert shared_server.query("SELECT count(*) FROM error_events")[0][0] == before


def test_every_problem_is_listed_at_once(shared_server: Server) -> None:
    response = shared_server.post("/ingest/errors", {"message": 1})
    fields = {d["field"] for d in response.json()["details"]}
    assert fields == {"exception_class", "message", "backtrace", "fingerprint"}


@pytest.mark.parametrize("raw", [b"{not json", b"\xff\xfe", b"[1, 2]", b"null", b""])
def test_body_that_is_not_a_json_object_is_a_400(shared_server: Server, raw: bytes) -> None:
    response = requests.post(shared_server.base + "/ingest/errors", data=raw,
                             headers=shared_server.headers(), timeout=10)
    assert response.status_code == 400
    assert "error" in response.json()


def test_unknown_fields_are_ignored(sqlite_server: Server) -> None:
    assert sqlite_server.post("/ingest/errors", error(extra_field={"x": 1})).status_code == 202


def test_batch_stores_valid_items_and_reports_the_rest(server: Server) -> None:
    body = {"errors": [error(fingerprint="one"), {"message": "no class"},
                       error(fingerprint="two"), error(fingerprint="three", backtrace=None)]}
    response = server.post("/ingest/errors/batch", body)
    assert response.status_code == 202
    payload = response.json()
    assert payload["accepted"] == 2
    assert payload["rejected"] == 2
    assert [item["index"] for item in payload["rejected_items"]] == [1, 3]
    assert {"field": "errors[3].backtrace", "error": "is required"} in \
        payload["rejected_items"][1]["details"]
    stored = {r.fingerprint for r in server.project_rows("error_events", "fingerprint")}
    assert stored == {"one", "two"}


def test_batch_with_every_item_invalid_is_a_400_and_stores_nothing(sqlite_server: Server) -> None:
    response = sqlite_server.post("/ingest/errors/batch", {"errors": [{"a": 1}, error(message=2)]})
    assert response.status_code == 400
    fields = {d["field"] for d in response.json()["details"]}
    assert "errors[0].exception_class" in fields and "errors[1].message" in fields
    assert sqlite_server.query("SELECT count(*) FROM error_events")[0][0] == 0


@pytest.mark.parametrize(("body", "problem"), [
    ({}, "is required"),
    ({"errors": {"a": 1}}, "must be an array"),
    ({"errors": []}, "at least one"),
    ({"errors": [error()] * 1001}, "at most 1000"),
])
def test_batch_envelope_rules(shared_server: Server, body: object, problem: str) -> None:
    response = shared_server.post("/ingest/errors/batch", body)
    assert response.status_code == 400
    assert problem in response.json()["details"][0]["error"]


def test_traceparent_links_errors_to_the_trace(server: Server) -> None:
    trace_id, span_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    headers = {"traceparent": f"00-{trace_id}-{span_id}-01"}
    assert server.post("/ingest/errors", error(fingerprint="linked"),
                       headers=headers).status_code == 202
    assert server.post("/ingest/errors/batch", {"errors": [error(fingerprint="b1")]},
                       headers=headers).status_code == 202
    for bad in ("00-xyz", f"ff-{trace_id}-{span_id}-01", f"00-{'0' * 32}-{span_id}-01"):
        assert server.post("/ingest/errors", error(fingerprint="unlinked"),
                           headers={"traceparent": bad}).status_code == 202
    rows = server.project_rows("error_events", "fingerprint, trace_id, span_id")
    linked = {(r.trace_id, r.span_id) for r in rows if r.fingerprint in ("linked", "b1")}
    assert linked == {(trace_id, span_id)}
    assert {(r.trace_id, r.span_id) for r in rows if r.fingerprint == "unlinked"} == {(None, None)}


def test_explicit_trace_id_in_the_record_wins_over_the_header(sqlite_server: Server) -> None:
    own = "0af7651916cd43dd8448eb211c80319c"
    headers = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    sqlite_server.post("/ingest/errors", error(trace_id=own, span_id="b7ad6b7169203331"),
                       headers=headers)
    (row,) = sqlite_server.query("SELECT trace_id, span_id FROM error_events")
    assert (row.trace_id, row.span_id) == (own, "b7ad6b7169203331")


EXCEPTIONS = [
    {"type": "KeyError", "value": "'sku-1'", "frames": [
        {"filename": "shop.py", "function": "find", "lineno": 3, "in_app": True,
         "context_line": "    return stock[sku]", "pre_context": ["def find(sku):"]}]},
    {"type": "LookupError", "value": "no sku-1", "module": "shop",
     "mechanism": {"type": "generic", "handled": False},
     "frames": [{"filename": "shop.py", "function": "buy", "lineno": 9, "in_app": True}]}]


def test_level_exceptions_context_and_event_id_are_stored_and_a_retry_counts_once(
        server: Server) -> None:
    sent = error(level="warning", exceptions=EXCEPTIONS, event_id="ab" * 16,
                 context={"user": {"id": "u-1"}, "request": {"headers": {"Cookie": "s=1"}},
                          "breadcrumbs": [{"message": "opened the cart"}]})
    for _ in range(2):  # a client retrying: one occurrence
        assert server.post("/ingest/errors", sent).status_code == 202
    assert server.post("/ingest/errors/batch", {"errors": [sent]}).status_code == 202
    (row,) = server.project_rows("error_events")
    assert (row.level, row.occurrence_key) == ("warning", "ab" * 16)
    assert _json(row.exceptions) == [{**EXCEPTIONS[0]}, {**EXCEPTIONS[1]}]
    assert _json(row.context) == {"user": {"id": "u-1"},
                                  "request": {"headers": {"Cookie": "[Filtered]"}},
                                  "breadcrumbs": [{"message": "opened the cart"}]}
    (group,) = server.project_rows("error_groups", "count")
    assert group.count == 1


def test_bad_details_are_a_400_naming_each_field(shared_server: Server) -> None:
    response = shared_server.post("/ingest/errors/batch", {"errors": [
        error(), error(level="loud", exceptions=[{"frames": [{"lineno": "3"}]}], context=[])]})
    assert response.status_code == 202
    assert response.json()["rejected_items"] == [{"index": 1, "details": [
        {"field": "errors[1].level",
         "error": "must be one of fatal, error, warning, info, debug, got 'loud'"},
        {"field": "errors[1].exceptions[0].frames[0].lineno",
         "error": "must be an integer, got string"},
        {"field": "errors[1].context", "error": "must be a JSON object, got array"}]}]


def _json(value: object) -> object:
    return json.loads(value) if isinstance(value, str) else value
