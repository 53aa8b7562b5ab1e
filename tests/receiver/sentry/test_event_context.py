"""receiver/sentry/context.py, tags.py and bounded.py, through decode_event: what else
an event tells (its context, breadcrumbs and tags) kept bounded, with no secret and
nothing the store cannot hold."""

from __future__ import annotations

import json

from receiver.jsonbody import parse_json
from receiver.sentry.bounded import FILTERED
from receiver.sentry.event import decode_event
from receiver.sentry.values import MAX_TAGS
from tests.receiver.sentry.events import NOW_US, assert_storable, decoded


def test_browser_tag_from_context_or_user_agent() -> None:
    from_context = decode_event({"contexts": {"browser": {"name": "Firefox",
                                                          "version": "128.0"}}}, NOW_US)
    assert from_context.tags == {"browser": "Firefox 128.0"}
    chrome = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/126.0.0.0 Safari/537.36")
    from_header = decode_event({"request": {"headers": [["User-Agent", chrome]]}}, NOW_US)
    assert from_header.tags == {"browser": "Chrome 126"}
    own = decode_event({"tags": {"browser": "mine"}, "contexts": {
        "browser": {"name": "Firefox"}, "client_os": {"name": "iOS", "version": "17"}}},
        NOW_US)
    assert own.tags == {"browser": "mine", "os": "iOS 17"}


def test_tags_stay_within_the_limit() -> None:
    tags = {f"k{i}": "v" for i in range(MAX_TAGS + 5)}
    error = decode_event({"tags": tags, "server_name": "web"}, NOW_US)
    assert error.tags is not None and len(error.tags) == MAX_TAGS


def test_a_blank_tag_key_and_a_pathless_frames_source_context_are_left_out() -> None:
    """As the custom door would refuse them, so that a forwarded error never is."""
    error = decode_event({"tags": {" ": "x", "k": " "}, "exception": {"values": [
        {"type": "E", "stacktrace": {"frames": [
            {"filename": "a.py", "lineno": 1, "context_line": "outer()", "in_app": True},
            {"function": "inner", "context_line": "raise E", "in_app": True}]}}]}}, NOW_US)
    assert error.tags == {"k": " "}
    assert error.source_context is not None and error.source_context.file == "a.py"
    assert error.exceptions is not None
    assert error.exceptions[0]["frames"][1]["context_line"] == "raise E"


SECRETS = ("Bearer s3cret-token", "session=s3cret-cookie", "s3cretsentrykey",
           "s3cret-proxy", "s3cret-pass")


def test_secrets_in_the_request_and_breadcrumbs_are_never_kept() -> None:
    event = {
        "request": {
            "url": "https://shop.example/pay?sentry_key=s3cretsentrykey&x=1",
            "query_string": [["sentry_key", "s3cretsentrykey"], ["page", "2"]],
            "headers": {"Authorization": "Bearer s3cret-token", "Cookie": "session=s3cret-cookie",
                        "X-Sentry-Auth": "Sentry sentry_key=s3cretsentrykey, sentry_version=7",
                        "Accept": "text/html"},
            "cookies": {"session": "s3cret-cookie"},
            "data": {"user": "ada", "password": "s3cret-pass"}},
        "breadcrumbs": {"values": [{"type": "http", "data": {
            "url": "http://sounding:3000/api/7/envelope/?sentry_key=s3cretsentrykey",
            "headers": [["proxy-authorization", "s3cret-proxy"]]}}]},
    }
    error = decode_event(event, NOW_US)
    stored = json.dumps([error.context, error.params, error.tags])
    assert not [s for s in SECRETS if s in stored]
    assert error.context is not None
    request = error.context["request"]
    assert request["headers"]["Authorization"] == FILTERED
    assert request["headers"]["Accept"] == "text/html"
    assert request["cookies"] == FILTERED
    assert request["url"] == f"https://shop.example/pay?sentry_key={FILTERED}&x=1"
    assert request["data"] == {"user": "ada", "password": FILTERED}


def test_breadcrumbs_keep_the_newest_hundred() -> None:
    crumbs = [{"message": str(i)} for i in range(150)]
    for form in (crumbs, {"values": crumbs}):
        context = decode_event({"breadcrumbs": form}, NOW_US).context
        assert context is not None
        assert [c["message"] for c in context["breadcrumbs"]] == [str(i) for i in range(50, 150)]


def test_a_context_past_its_budget_loses_its_biggest_parts_first() -> None:
    big = {f"k{i}": "x" * 8000 for i in range(20)}  # about 160 KB
    error = decode_event({"contexts": big, "user": {"id": "u"}, "platform": "python"}, NOW_US)
    assert error.context == {"user": {"id": "u"}, "platform": "python",
                             "_trimmed": ["contexts"]}


def test_numbers_json_cannot_carry_in_the_context_become_none() -> None:
    """1e400 is JSON the body's parser reads as infinity; kept, it made the store
    refuse the whole error after the door had answered 200 (found by
    tests/fuzz/test_fuzz_sentry.py)."""
    event = parse_json(b'{"message": "m", "sdk": {"name": "x", "v": 1e400}, '
                       b'"user": {"id": "u", "n": -1e400}, "contexts": {"os": {"v": 1e400}}}')
    error = decoded(event, NOW_US)
    assert error.context is not None
    assert error.context["sdk"] == {"name": "x", "v": None}
    assert error.context["user"] == {"id": "u", "n": None}
    assert error.context["contexts"] == {"os": {"v": None}}
    assert_storable(error)
