"""receiver/custom/error_details.py: an error's level, exceptions, context and event_id on
the custom doors, checked strictly and bounded by the Sentry door's own rule.

The round trips read what the forward exporter sends (exporters/forward/encode.py)
with the custom door's decoder: a Sentry event's error comes back unchanged, bounds,
filtered secrets and trimmed context included."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from exporters.forward.encode import error_document
from model.errors import InvalidInput
from model.records import ErrorEvent
from receiver.custom.decode import decode_error
from receiver.jsonbody import parse_json
from receiver.sentry.bounded import FILTERED
from tests.fuzz.strategies import Mutated, dumps, mutations
from tests.receiver.sentry.events import decoded, node_event
from tests.support import clients

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)

NOW_US = 1_800_000_000_000_000
CLIENT = Path(__file__).parents[1] / "sentry" / "sentry_sdk_client.py"
BASE = {"exception_class": "E", "message": "m", "backtrace": [], "fingerprint": "fp"}


def decode(**details: Any) -> ErrorEvent:
    return decode_error({**BASE, **details}, NOW_US, None)


def problems(**details: Any) -> set[tuple[str, str]]:
    with pytest.raises(InvalidInput) as raised:
        decode(**details)
    return {(d["field"], d["error"]) for d in raised.value.details}


def forwarded(error: ErrorEvent) -> ErrorEvent:
    """`error` as the gateway decodes what the forward exporter sends of it."""
    document = json.loads(json.dumps(error_document(error)))
    return decode_error(document, 0, None)


def real_sdk_events() -> list[dict[str, Any]]:
    python = clients.python(clients.SENTRY_SDK_2)
    out = subprocess.run([python, str(CLIENT)], capture_output=True, text=True,
                         check=True, timeout=60)
    events: list[dict[str, Any]] = json.loads(out.stdout)["events"]
    return events


def test_a_real_sdk_events_error_comes_back_unchanged_through_the_custom_door() -> None:
    for event in real_sdk_events():
        error = decoded(event, NOW_US)
        assert error.exceptions or error.context  # details to carry
        assert forwarded(error) == error


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=mutations(node_event(), max_changes=4))
def test_any_sentry_events_error_comes_back_unchanged(data: Mutated) -> None:
    """Whatever the Sentry door makes of an event, the custom door takes back as it
    was: a gateway never refuses (and so never loses) what a sidecar stored."""
    try:
        event = parse_json(dumps(data.body))  # as the door reads it
    except InvalidInput:
        return  # refused before any decoder sees it
    if not isinstance(event, dict):
        return
    error = decoded(event, NOW_US)
    assert forwarded(error) == error


@pytest.mark.parametrize("event", [
    {"message": "m", "tags": {" ": "blank key", "k": " "}},
    {"exception": {"values": [{"type": "E", "stacktrace": {"frames": [
        {"function": "f", "context_line": "x = 1", "in_app": True}]}}]}},
    {"exception": {"values": [{"value": "v"}]}, "environment": " ", "user": {"id": " "}},
])
def test_events_at_the_edges_of_the_custom_doors_rules_come_back_unchanged(
        event: dict[str, Any]) -> None:
    error = decoded(event, NOW_US)
    assert forwarded(error) == error


def test_a_bounded_event_comes_back_unchanged() -> None:
    frames = [{"function": f"f{i}", "filename": "a.py", "lineno": i + 1, "in_app": True,
               "context_line": "x" * 5000, "pre_context": [str(n) for n in range(30)],
               "vars": {"password": "s3cret"}} for i in range(300)]
    chain: list[dict[str, Any]] = [
        {"type": f"E{i}", "value": "v" * 10_000,
         "mechanism": {"type": "generic", "handled": False, "data": {"x": 1}}}
        for i in range(15)]
    chain[-1]["stacktrace"] = {"frames": frames}
    event = {"exception": {"values": chain}, "level": "fatal", "event_id": "ab" * 16,
             "contexts": {f"k{i}": "x" * 8000 for i in range(20)},
             "request": {"headers": {"Authorization": "Bearer s3cret"}, "cookies": "a=b"},
             "breadcrumbs": [{"message": str(i)} for i in range(150)],
             "user": {"id": "u"}, "platform": "python"}
    error = decoded(event, NOW_US)
    assert error.context is not None and error.context["_trimmed"] == ["contexts"]
    again = forwarded(error)
    assert again == error
    assert again.occurrence_key == "ab" * 16 and again.level == "fatal"


def test_the_custom_door_bounds_exactly_as_the_sentry_door() -> None:
    frames = [{"function": f"f{i}", "filename": "a.py", "lineno": i, "colno": 2,
               "context_line": "y" * 2000, "post_context": ["z"] * 40, "vars": {"a": 1}}
              for i in range(400)]
    chain = [{"type": f"E{i}", "value": "v" * 9000, "module": "m" * 600,
              "mechanism": {"type": "t", "handled": True, "exception_id": 3, "meta": {}}}
             for i in range(12)]
    context = {"user": {"id": "u", "password": "p"}, "breadcrumbs": [{"n": i} for i in range(120)],
               "request": {"cookies": {"s": "1"}, "url": "http://x/?sentry_key=abc&y=1"},
               "contexts": {"deep": [[[[[[[[[[1]]]]]]]]]]}, "platform": "p" * 300}
    sentry_chain = [{**e, "stacktrace": {"frames": frames}} for e in chain]
    from_sentry = decoded({"exception": {"values": sentry_chain}, **context}, NOW_US)
    from_custom = decode(exceptions=[{**e, "frames": frames} for e in chain], context=context)
    assert from_custom.exceptions == from_sentry.exceptions
    assert from_custom.context == from_sentry.context
    assert from_custom.context is not None
    assert from_custom.context["user"]["password"] == FILTERED
    assert from_custom.context["request"]["cookies"] == FILTERED
    assert len(from_custom.context["breadcrumbs"]) == 100


def test_a_custom_context_keeps_any_part_bounded_and_secrets_filtered() -> None:
    error = decode(context={"order": {"id": 7, "token": "t"}, "api_key": "k", "_trimmed": ["x"]})
    assert error.context == {"order": {"id": 7, "token": FILTERED}, "api_key": FILTERED,
                             "_trimmed": ["x"]}


def test_details_absent_or_empty_leave_the_fields_unset() -> None:
    for details in ({}, {"exceptions": [], "context": {}}):
        error = decode(**details)
        assert (error.level, error.exceptions, error.context, error.occurrence_key) == (
            None, None, None, None)


@pytest.mark.parametrize("sent", ["0123456789ABCDEF0123456789abcdef",
                                  "01234567-89ab-cdef-0123-456789abcdef"])
def test_event_id_is_the_occurrence_key(sent: str) -> None:
    assert decode(event_id=sent).occurrence_key == "0123456789abcdef0123456789abcdef"


@pytest.mark.parametrize(("details", "expected"), [
    ({"level": "warn"}, {("level", "must be one of fatal, error, warning, info, debug, "
                                   "got 'warn'")}),
    ({"level": 40}, {("level", "must be a string, got integer")}),
    ({"event_id": "xyz"}, {("event_id", "must be 32 hexadecimal characters, not all zero")}),
    ({"event_id": "0" * 32}, {("event_id", "must be 32 hexadecimal characters, not all zero")}),
    ({"exceptions": {"type": "E"}}, {("exceptions", "must be an array of objects, got object")}),
    ({"exceptions": [3, {}]}, {("exceptions[0]", "must be an object, got integer"),
                               ("exceptions[1]", "must have a type, a value or frames")}),
    ({"exceptions": [{"type": 1, "value": None, "mechanism": {"handled": "no"}}]},
     {("exceptions[0].type", "must be a string, got integer"),
      ("exceptions[0].mechanism.handled", "must be a boolean, got string")}),
    ({"exceptions": [{"type": "E", "mechanism": []}]},
     {("exceptions[0].mechanism", "must be an object, got array")}),
    ({"exceptions": [{"type": "E", "frames": [{"lineno": -1, "in_app": "yes",
                                                "pre_context": [1], "function": 3}, "f"]}]},
     {("exceptions[0].frames[0].lineno", "must be between 0 and 2147483647, got -1"),
      ("exceptions[0].frames[0].in_app", "must be a boolean, got string"),
      ("exceptions[0].frames[0].pre_context", "must be an array of strings"),
      ("exceptions[0].frames[0].function", "must be a string, got integer"),
      ("exceptions[0].frames[1]", "must be an object, got string")}),
    ({"context": ["user"]}, {("context", "must be a JSON object, got array")}),
    ({"context": {"user": "u", "request": [], "message": 3, "platform": 1,
                  "breadcrumbs": [1], "_trimmed": [2]}},
     {("context.user", "must be an object, got string"),
      ("context.request", "must be an object, got array"),
      ("context.message", "must be a string or an object, got integer"),
      ("context.platform", "must be a string, got integer"),
      ("context.breadcrumbs", "must be an array of objects"),
      ("context._trimmed", "must be an array of strings")}),
])
def test_bad_details_are_refused_naming_each_field(details: dict[str, Any],
                                                   expected: set[tuple[str, str]]) -> None:
    assert problems(**details) == expected


def test_bad_details_are_listed_with_the_records_other_problems() -> None:
    with pytest.raises(InvalidInput) as raised:
        decode_error({**BASE, "fingerprint": None, "level": "loud"}, NOW_US, None, "errors[2].")
    assert {d["field"] for d in raised.value.details} == {"errors[2].fingerprint",
                                                          "errors[2].level"}
