"""receiver/sentry/envelope.py: the envelope framing, with and without `length`,
the tolerated variants, and every framing error naming its item."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.errors import InvalidInput
from receiver.sentry.envelope import MAX_HEADER_BYTES, MAX_ITEMS, parse_envelope
from tests.receiver.sentry.envelopes import envelope, item

EVENT_ID = "9ec79c33ec9942ab8353589fcb2e04dc"


def _field(body: bytes) -> tuple[str, str]:
    with pytest.raises(InvalidInput) as caught:
        parse_envelope(body)
    detail = caught.value.details[0]
    return detail["field"], detail["error"]


def test_items_with_length_keep_payloads_holding_newlines() -> None:
    body = envelope({"event_id": EVENT_ID},
                    [item("attachment", b"line one\nline two\n"), item("event", {"a": 1})])
    parsed = parse_envelope(body)
    assert parsed.headers == {"event_id": EVENT_ID}
    assert [i.type for i in parsed.items] == ["attachment", "event"]
    assert parsed.items[0].payload == b"line one\nline two\n"
    assert parsed.items[1].payload == b'{"a": 1}'


def test_items_without_length_run_to_the_newline() -> None:
    body = b'{}\n{"type":"event"}\n{"message":"hi"}\n{"type":"session"}\n{"sid":"x"}'
    parsed = parse_envelope(body)
    assert [(i.type, i.payload) for i in parsed.items] == [
        ("event", b'{"message":"hi"}'), ("session", b'{"sid":"x"}')]


def test_empty_payloads_with_and_without_length() -> None:
    body = b'{}\n{"type":"a","length":0}\n\n{"type":"b"}\n\n{"type":"c"}\n'
    parsed = parse_envelope(body)
    assert [(i.type, i.payload) for i in parsed.items] == [("a", b""), ("b", b""), ("c", b"")]


def test_an_envelope_without_items_and_without_a_final_newline() -> None:
    assert parse_envelope(b"{}").items == []
    assert parse_envelope(b'{"dsn":"x"}\n').headers == {"dsn": "x"}


def test_crlf_is_read_in_headers_and_after_a_known_length() -> None:
    body = envelope({}, [item("event", {"a": 1}), item("x", b"raw\r")], newline=b"\r\n")
    parsed = parse_envelope(body)
    assert [(i.type, i.payload) for i in parsed.items] == [("event", b'{"a": 1}'),
                                                            ("x", b"raw\r")]


def test_a_payload_without_length_is_kept_as_sent() -> None:
    parsed = parse_envelope(b'{}\r\n{"type":"event"}\r\n{"a":1}\r\n')
    assert parsed.items[0].payload == b'{"a":1}\r'


@pytest.mark.parametrize(("body", "field", "problem"), [
    (b"", "header", "missing"),
    (b"[1]\n", "header", "must be a JSON object"),
    (b"{nope\n", "header", "not valid JSON"),
    (b'{}\n{"length":2}\nab\n', "items[0].type", "type"),
    (b'{}\n{"type":"a"}\n\n{"type":7}\n', "items[1].type", "type"),
    (b'{}\n{"type":"a","length":10}\nshort\n', "items[0].length", "only 6 follow"),
    (b'{}\n{"type":"a","length":2}\nabc\n', "items[0].length", "not followed by a newline"),
    (b'{}\n{"type":"a","length":-1}\n\n', "items[0].length", ">= 0"),
    (b'{}\n{"type":"a","length":"3"}\nabc\n', "items[0].length", ">= 0"),
    (b'{}\n{"type":"a","length":true}\na\n', "items[0].length", ">= 0"),
    (b'{}\n{"type":"a"}\n\nnot json\n', "items[1]", "not valid JSON"),
])
def test_framing_errors_name_the_item(body: bytes, field: str, problem: str) -> None:
    got_field, got_problem = _field(body)
    assert got_field == field
    assert problem in got_problem


def test_the_number_of_items_is_bounded() -> None:
    body = b"{}\n" + b'{"type":"a"}\n\n' * (MAX_ITEMS + 1)
    assert _field(body) == (f"items[{MAX_ITEMS}]",
                            f"an envelope holds at most {MAX_ITEMS} items")
    assert len(parse_envelope(b"{}\n" + b'{"type":"a"}\n\n' * MAX_ITEMS).items) == MAX_ITEMS


def test_header_lines_are_bounded() -> None:
    long_header = b'{"x":"' + b"a" * MAX_HEADER_BYTES + b'"}'
    assert _field(long_header + b"\n")[0] == "header"
    assert _field(b'{}\n{"type":"a","x":"' + b"a" * MAX_HEADER_BYTES + b'"}\n\n')[0] == \
        "items[0]"


# Round trips: whatever SDKs write, in any of the forms, reads back as it was.

_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**53, 2**53),
                          st.text(max_size=20))
_headers = st.dictionaries(st.text(max_size=10).filter(lambda k: k not in ("type", "length")),
                           _json_scalars, max_size=4)
_types = st.sampled_from(["event", "transaction", "session", "attachment", "client_report",
                          "replay_video", "something_new"])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(headers=_headers, items=st.lists(st.tuples(_types, _headers, st.binary(max_size=64)),
                                        max_size=8),
       trailing=st.booleans(), crlf=st.booleans())
def test_round_trip_with_length(headers: dict, items: list, trailing: bool, crlf: bool) -> None:
    body = envelope(headers, [({"type": t, **h}, p) for t, h, p in items],
                    trailing_newline=trailing, newline=b"\r\n" if crlf else b"\n")
    parsed = parse_envelope(body)
    assert parsed.headers == headers
    assert [(i.type, i.payload) for i in parsed.items] == [(t, p) for t, _, p in items]
    assert [{k: v for k, v in i.headers.items() if k not in ("type", "length")}
            for i in parsed.items] == [h for _, h, _ in items]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(items=st.lists(st.tuples(_types, st.binary(max_size=64).filter(
    lambda p: b"\n" not in p)), max_size=8), trailing=st.booleans())
def test_round_trip_without_length(items: list, trailing: bool) -> None:
    body = envelope({}, [({"type": t}, p) for t, p in items], lengths=False,
                    trailing_newline=trailing)
    assert [(i.type, i.payload) for i in parse_envelope(body).items] == items


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=512))
def test_any_bytes_parse_or_are_refused_as_invalid_input(body: bytes) -> None:
    try:
        parsed = parse_envelope(body)
    except InvalidInput as exc:
        assert exc.details and exc.details[0]["field"].startswith(("header", "items["))
    else:
        assert len(parsed.items) <= MAX_ITEMS
