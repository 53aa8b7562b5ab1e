"""processors/scrub/ and model/policy.py: the rules, record by record, and the
stage's promises (a span with nothing to scrub is left unread; the fingerprint is
computed on scrubbed text). End to end through every door: test_scrub_doors.py."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pytest

from model.fingerprint import Grouping
from model.policy import Policy, ScrubSettings, filter_settings, scrub_settings
from model.records import Batch, ErrorEvent, Feedback, MetricPoint
from processors.grouping import GroupingProcessor
from processors.scrub import MASK, Scrubber, ScrubProcessor, luhn, scrub_batch
from receiver.otlp.decode_logs import decode_logs_body
from receiver.otlp.decode_traces import decode_traces_body
from tests.processors.test_scrub_doors import NOW_NS, kv, logs_body, traces_body

KEY = b"k" * 32
DEFAULTS = Scrubber(ScrubSettings(), KEY)


def hashed(value: str) -> str:
    return "hash:" + hmac.new(KEY, value.encode(), hashlib.sha256).hexdigest()[:20]


@pytest.mark.parametrize(("text", "kept"), [
    ("card 4111 1111 1111 1111 ok", f"card {MASK} ok"),
    ("card 4111-1111-1111-1111", f"card {MASK}"),
    ("amex 378282246310005.", f"amex {MASK}."),
    # Not Luhn-valid, too short, or part of a longer number: kept.
    ("order 4111111111111112", "order 4111111111111112"),
    ("id 123456789012", "id 123456789012"),
    ("trace 41111111111111110000000", "trace 41111111111111110000000"),
    # In a hexadecimal id, between letters: an identifier (a Luhn-valid run, from a
    # Sentry trace id that was masked in a test run).
    ("trace db16144722074802b3690ea52dde7e2e", "trace db16144722074802b3690ea52dde7e2e"),
    ("ref ORD4111111111111111", "ref ORD4111111111111111"),
    ("Authorization: Bearer abc.def-ghi_123", f"Authorization: Bearer {MASK}"),
    ("basic dXNlcjpwYXNz", f"basic {MASK}"),
    ("GET /x?sentry_key=0123abcd&v=7", f"GET /x?sentry_key={MASK}&v=7"),
    ("login password=hunter2 failed", f"login password={MASK} failed"),
    ('{"api_key": "zz-9", "n": 1}', f'{{"api_key": "{MASK}", "n": 1}}'),
    ("X-Auth-Token: t0k3n", f"X-Auth-Token: {MASK}"),
    ("the author: ada, 12 items", "the author: ada, 12 items"),
    ("mail ada@example.com from 10.0.0.1", "mail ada@example.com from 10.0.0.1"),
])
def test_the_default_rules_mask_values(text: str, kept: str) -> None:
    assert DEFAULTS.text(text) == kept


def test_luhn() -> None:
    assert luhn("4111111111111111") and luhn("5500000000000004")
    assert not luhn("4111111111111112")


def test_secret_names_mask_their_values_at_any_depth_and_in_pairs() -> None:
    value: dict[str, Any] = {
        "password": "x", "user": {"api_key": 1, "name": "ada"}, "Set-Cookie": "sid=1",
        "headers": [["Authorization", "Basic dXNlcjpwYXNz"], ["Accept", "*/*"]],
        "session_id": {"nested": "object"}, "tokens": ["a", "b"], "author": "bob",
        # A number or a flag under such a name is no secret (OpenTelemetry's GenAI
        # conventions count tokens).
        "gen_ai.usage.input_tokens": 812, "session_active": True}
    assert DEFAULTS.mapping(value) == {
        "password": MASK, "user": {"api_key": 1, "name": "ada"}, "Set-Cookie": MASK,
        "headers": [["Authorization", MASK], ["Accept", "*/*"]],
        "session_id": MASK, "tokens": MASK, "author": "bob",
        "gen_ai.usage.input_tokens": 812, "session_active": True}


def test_optional_rules_and_defaults_off() -> None:
    both = Scrubber(scrub_settings({"emails": True, "ip_addresses": True}), KEY)
    assert both.text("ada@example.com at 10.0.0.1 and 2001:db8::7, not 1.2.3") == \
        f"{MASK} at {MASK} and {MASK}, not 1.2.3"
    assert both.mapping({"user": {"ip_address": "::1"}}) == {"user": {"ip_address": MASK}}
    off = Scrubber(scrub_settings({"defaults": False}), KEY)
    assert off.mapping({"password": "x", "card": "4111111111111111"}) == {
        "password": "x", "card": "4111111111111111"}


def test_custom_rules_mask_hash_or_remove_by_key_path_or_pattern() -> None:
    scrubber = Scrubber(scrub_settings({"rules": [
        {"keys": ["user.id", "enduser.*"], "action": "hash"},
        {"keys": ["debug"], "action": "remove"},
        {"pattern": r"ORD-\d+", "action": "hash"},
        {"pattern": r"ssn \d{3}-\d{2}-\d{4}", "action": "remove"},
        {"keys": ["session_hint"], "action": "hash"},  # before the default mask
    ]}), KEY)
    value = {"user": {"id": "u-1", "email": "a@b.c"}, "enduser.id": "u-1", "debug": {"x": 1},
             "note": "ORD-77 for ssn 123-45-6789", "session_hint": "s"}
    assert scrubber.mapping(value) == {
        "user": {"id": hashed("u-1"), "email": "a@b.c"}, "enduser.id": hashed("u-1"),
        "note": f"{hashed('ORD-77')} for ", "session_hint": hashed("s")}
    # Stable: the same value, the same hash, whichever record; another key, another hash.
    assert Scrubber(scrubber.settings, KEY).hashed("u-1") == hashed("u-1")
    assert Scrubber(scrubber.settings, b"other").hashed("u-1") != hashed("u-1")


@pytest.mark.parametrize(("raw", "problem"), [
    ({"rules": [{"action": "shred", "keys": ["a"]}]}, "scrubbing.rules[0].action"),
    ({"rules": [{"pattern": "("}]}, "scrubbing.rules[0].pattern is not a regular"),
    ({"rules": [{"pattern": "a*"}]}, "matches the empty string"),
    ({"rules": [{"keys": ["a"], "pattern": "b"}]}, "either keys or a pattern"),
    ({"emails": "yes"}, "scrubbing.emails must be true or false"),
    ({"mask_all": True}, "scrubbing.mask_all is not a setting"),
])
def test_bad_settings_are_refused_naming_the_key(raw: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        scrub_settings(raw)


def test_bad_filters_are_refused_naming_the_key() -> None:
    with pytest.raises(ValueError, match="filters.ip_ranges: '10.0.0.300/8'"):
        filter_settings({"ip_ranges": ["10.0.0.300/8"]})
    with pytest.raises(ValueError, match="filters.releases must be a list"):
        filter_settings({"releases": [1]})


def test_a_span_with_nothing_to_scrub_stays_unread_and_one_with_a_secret_is_scrubbed() -> None:
    decoded = decode_traces_body(traces_body(), True).spans
    clean = decode_traces_body(_clean_traces(), True).spans
    batch = Batch(1, spans=[*decoded, *clean])
    ScrubProcessor("scrub").process(batch)
    secret, plain = batch.spans
    assert not secret.untouched and plain.untouched
    assert secret.attributes["user.password"] == MASK
    assert secret.attributes["payment.card"] == MASK
    assert secret.attributes["http.request.header.authorization"] == MASK  # by its name
    assert secret.attributes["note"] == f"paid with {MASK}"
    assert secret.resource_attributes["deploy.token"] == MASK
    (event,) = secret.events
    assert "4111" not in event["attributes"]["exception.message"]


def _clean_traces() -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add()
    spans.resource.attributes.extend([kv("service.name", "shop")])
    span = spans.scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = bytes(range(2, 18)), bytes(range(2, 10)), "GET /"
    span.start_time_unix_nano, span.end_time_unix_nano = NOW_NS - 1000, NOW_NS
    span.attributes.extend([kv("http.route", "/items/{id}"), kv("http.status_code", 200)])
    return request.SerializeToString()


def test_log_bodies_and_attributes_and_metric_points_are_scrubbed() -> None:
    logs = decode_logs_body(logs_body(), True, NOW_NS).logs
    point = MetricPoint("m", "", "", "gauge", 0, False, "shop", {"db.password": "p"}, "",
                        {"api_key": "k", "ok": "v"}, 0, NOW_NS, value=1,
                        exemplars=[{"attributes": {"cookie": "c"}}])
    batch = Batch(1, logs=logs, metrics=[point])
    scrub_batch(batch, Policy())
    first, second, _third = batch.logs
    assert "4111" not in first.body and MASK in first.body
    assert first.attributes["auth_token"] == MASK
    assert second.body["password"] == MASK
    assert second.body["headers"]["Authorization"] == MASK
    assert point.attributes == {"api_key": MASK, "ok": "v"}
    assert point.resource_attributes == {"db.password": MASK}
    assert point.exemplars[0]["attributes"] == {"cookie": MASK}


def sentry_error(card: str) -> ErrorEvent:
    message = f"payment failed with card {card}"
    return ErrorEvent(
        "", "ValueError", message, ["File \"pay.py\", line 3, in charge"], 0,
        user_id="u-1", params={"password": "p"}, tags={"session": "s"},
        exceptions=[{"type": "ValueError", "value": message, "frames": []}],
        context={"request": {"data": {"card": card}}, "breadcrumbs": [{"message": card}],
                 "user": {"id": "u-1", "ip_address": "198.51.100.7"}},
        grouping=Grouping("ValueError", message, frame="pay.py in charge"))


def test_an_errors_parts_are_scrubbed_and_its_fingerprint_is_computed_after() -> None:
    batch = Batch(1, errors=[sentry_error("4111 1111 1111 1111"),
                             sentry_error("5500 0000 0000 0004")])
    ScrubProcessor("scrub").process(batch)
    GroupingProcessor("grouping").process(batch)
    first, second = batch.errors
    assert first.fingerprint == second.fingerprint and len(batch.groups) == 1
    assert first.message == f"payment failed with card {MASK}"
    assert first.exceptions == [{"type": "ValueError", "value": first.message, "frames": []}]
    assert first.params == {"password": MASK} and first.tags == {"session": MASK}
    assert first.context == {"request": {"data": {"card": MASK}},
                             "breadcrumbs": [{"message": MASK}],
                             "user": {"id": "u-1", "ip_address": "198.51.100.7"}}
    assert first.user_id == "u-1"


def test_a_batch_carries_its_projects_policy() -> None:
    policy = Policy(scrub_settings({"ip_addresses": True,
                                    "rules": [{"keys": ["user.id"], "action": "hash"}]}),
                    hash_key=KEY)
    batch = Batch(1, errors=[sentry_error("x")], policy=policy)
    ScrubProcessor("scrub").process(batch)
    (error,) = batch.errors
    assert error.user_id == hashed("u-1")
    assert error.context is not None
    assert error.context["user"] == {"id": hashed("u-1"), "ip_address": MASK}


def test_a_custom_pattern_is_found_in_a_span_events_and_a_log_records_body() -> None:
    """Custom patterns have no quick test on the encoded bytes: each value is searched."""
    policy = Policy(scrub_settings({"defaults": False,
                                    "rules": [{"pattern": "cust-[0-9]+", "action": "hash"}]}),
                    hash_key=KEY)
    spans = decode_traces_body(traces_body(), True).spans
    logs = decode_logs_body(logs_body(), True, NOW_NS).logs
    batch = Batch(1, spans=spans, logs=logs, policy=policy)
    ScrubProcessor("scrub").process(batch)
    (event,) = spans[0].events
    assert hashed("cust-4242") in event["attributes"]["exception.message"]
    assert spans[0].attributes["user.password"] == "pw-Secr3t-hunter2"  # defaults off


def test_every_secret_name_has_a_quick_hint() -> None:
    """A span is left unread when its bytes hold none of HINT_WORDS: every secret name,
    in either form, must hold one, or its value would never be looked at."""
    from model.secretnames import EXACT, PARTS
    from processors.scrub import HINT_WORDS
    for name in (*PARTS, *EXACT):
        for form in (name, name.replace("_", "-"), name.upper()):
            assert any(w in form.lower().encode() for w in HINT_WORDS), form


def test_feedback_is_scrubbed_and_its_email_by_the_email_rule() -> None:
    def said() -> Feedback:
        return Feedback("ab" * 16, 1, "my card 4111 1111 1111 1111 was charged twice",
                        "feedback", name="Ada", email="ada@example.com",
                        url="https://shop.example/pay?token=abc123")

    plain = Batch(1)
    plain.feedback.append(said())
    scrub_batch(plain, Policy())
    (kept,) = plain.feedback
    assert kept.message == f"my card {MASK} was charged twice"
    assert kept.url == f"https://shop.example/pay?token={MASK}"
    assert (kept.name, kept.email) == ("Ada", "ada@example.com")  # the email rule is off
    emails = Batch(1)
    emails.feedback.append(said())
    scrub_batch(emails, Policy(scrub=scrub_settings({"emails": True})))
    assert emails.feedback[0].email == MASK


def test_a_texts_change_is_remembered_per_quick_tests_passed_and_boundedly() -> None:
    """Scrubber.suspect_any remembers whether scrubbing changes a short text, by the
    text and the quick tests its batch passed (which decide what is searched)."""
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue

    scrubber = Scrubber(ScrubSettings(), KEY)
    secret = AnyValue(string_value="login password=hunter2")
    for _ in range(2):
        assert scrubber.suspect_any(secret, ((b"pass",), False, False, False))
        assert not scrubber.suspect_any(secret, ((), False, False, False))
        assert scrubber.suspect_any(secret)
    assert not scrubber.suspect_any(AnyValue(string_value="SELECT * FROM sessions"))
    for n in range(3000):
        scrubber.suspect_any(AnyValue(string_value=f"order {n}"))
    assert len(scrubber._changes) <= 1000
