"""The conditions on a span body's bytes that let the database skip bodies an
attribute term cannot match (storage/queries/body_match.py): never a body that
matches, on values of every kind, and the search finds the same with them."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.proto.trace.v1 import trace_pb2

from model.otlp_values import attributes_of, fill_key_values
from storage.queries import trace_search as ts
from storage.queries.body_match import value_forms
from storage.queries.trace_terms import attr_text, parse
from tests.storage.test_queries import HOUR, NOW, NS, Db, db, span  # noqa: F401

VALUES: list[Any] = [
    True, False, 0, 1, -1, 500, 2**63 - 1, -2**63, 1.5, -0.0, 1e20, 2.0, float("nan"),
    float("inf"), b"\x00\xff\x10", b"abc", "", "abcd", "/checkout", "500", "true", "1.5",
    "héllo wörld", ["a", 1], {"k": "v"}, [],
]


def _body(value: Any) -> tuple[bytes, str]:
    message = trace_pb2.Span(name="s")
    fill_key_values(message.attributes, {"other": "x", "k": value})
    body = message.SerializeToString()
    decoded = attributes_of(trace_pb2.Span.FromString(body).attributes)
    return body, attr_text(decoded["k"])


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_a_body_holding_the_value_meets_the_condition(value: Any) -> None:
    body, text = _body(value)
    forms = value_forms(text)
    assert forms == [] or any(f in body for f in forms), (text, forms, body)


def test_a_body_with_another_value_is_skipped() -> None:
    for value, other in (("/checkout", "/cart"), (500, "200"), (True, "false"),
                         (1.5, "2.5"), ("abcd", "wxyz")):
        body, _ = _body(value)
        assert not any(f in body for f in value_forms(other)), (value, other)
    assert value_forms("[1, 2]") == [] and value_forms("NaN") == []


def test_the_search_finds_every_kind_of_value(db: Db) -> None:  # noqa: F811
    values = {"i": -7, "big": 2**40, "d": 0.25, "b": b"\x01\x02\x03", "t": True,
              "s": "a b", "n": 12}
    db.ingest(spans=[span("9" * 32, "9" * 16, "GET /x", NOW - 60, 5, **values),
                     span("8" * 32, "8" * 16, "GET /y", NOW - 30, 5, n="12", d="0.25")])

    def found(q: str) -> list[str]:
        page = ts.search(db.store, db.project, (NOW - HOUR) * NS, NOW * NS, terms=parse(q))
        return [t.trace_id[0] for t in page.items]

    assert found("i=-7") == found("big=1099511627776") == found("t=true") == ["9"]
    assert found("b=AQID") == found('s="a b"') == ["9"]
    assert found("d=0.25") == found("n=12") == ["8", "9"]  # the string and the number
    assert found("i=7") == found("t=false") == found("d=0.5") == found("b=AQIE") == []
