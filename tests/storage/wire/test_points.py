"""Series keys of metric points in the wire form (storage/wire/points.py): the same
whether or not the process has made them before, and the memory of them bounded."""

from __future__ import annotations

import hashlib
from typing import Any

from model.records import GAUGE, MetricPoint
from storage import rows
from storage.jsontext import dumps
from storage.wire import points
from storage.wire.points import MAX_SERIES_KEYS, encode_metrics, series_key
from storage.wire.resources import ResourceRows

PREFIX = b"requests\nsum\n1\n42\nscope\n"


def fresh(attributes: dict[str, Any]) -> tuple[bytes, str]:
    """The key as the wire form defines it, made from nothing."""
    text = dumps(dict(sorted(attributes.items())))
    return hashlib.blake2b(PREFIX + text.encode(), digest_size=16).digest(), text


def test_a_series_sent_again_has_the_key_it_had() -> None:
    attributes = {"route": "/a", "method": "GET", "status": 200}
    first = series_key(PREFIX, attributes)
    assert first == fresh(attributes)
    assert series_key(PREFIX, dict(attributes)) == first
    # The same attributes in another order are the same series.
    assert series_key(PREFIX, dict(reversed(attributes.items()))) == first
    # Another metric's series with these attributes is another series.
    assert series_key(PREFIX + b"x", attributes)[0] != first[0]


def test_values_equal_in_python_but_not_in_json_are_other_series() -> None:
    made = [series_key(PREFIX, {"v": value}) for value in (1, True, 1.0, "1")]
    assert made == [fresh({"v": value}) for value in (1, True, 1.0, "1")]
    assert len({key for key, _ in made}) == 4


def test_list_and_map_values_are_keyed_too() -> None:
    for attributes in ({"l": [1, "a"]}, {"m": {"k": True}}):
        assert series_key(PREFIX, attributes) == fresh(attributes)
        assert series_key(PREFIX, attributes) == fresh(attributes)


def test_the_memory_of_keys_is_bounded() -> None:
    for i in range(MAX_SERIES_KEYS + 10):
        series_key(PREFIX, {"i": i})
    assert 0 < len(points._SERIES_KEYS) <= MAX_SERIES_KEYS
    assert series_key(PREFIX, {"i": 3}) == fresh({"i": 3})


MINUTE_NS = 60 * 1_000_000_000
_EXEMPLAR = rows.METRIC_EXEMPLARS.getter("minute", "slot", "value", "trace_id", "span_id")


def _gauge(time_ns: int, exemplars: list[dict[str, Any]]) -> MetricPoint:
    return MetricPoint(name="queue.depth", unit="", description="", kind=GAUGE, temporality=0,
                       monotonic=False, service_name="s", resource_attributes={},
                       scope_name="", attributes={}, start_ns=0, time_ns=time_ns, value=1,
                       exemplars=exemplars)


def _exemplar(n: int, time_ns: int = 0, span: str = "") -> dict[str, Any]:
    return {"time_ns": time_ns, "value": float(n), "trace_id": f"{n:032x}", "span_id": span}


def test_exemplars_that_name_a_trace_become_rows_at_most_a_few_a_minute() -> None:
    t = 100 * MINUTE_NS
    many = _gauge(t, [_exemplar(n) for n in range(1, 41)])
    untraced = _gauge(t + 1, [{"time_ns": t, "value": 1.0, "trace_id": "", "span_id": ""}])
    later = _gauge(t + MINUTE_NS, [_exemplar(7, span="01" * 8)])
    _, stored, exemplars = encode_metrics([many, untraced, later], ResourceRows(1))
    assert len(stored) == 3
    found = [_EXEMPLAR(e) for e in exemplars]
    # The first exemplar of each slot (its trace id's last byte), the time their point's.
    assert found == [(6000, n % rows.MAX_EXEMPLARS, float(n), n.to_bytes(16, "big"), b"")
                     for n in range(1, rows.MAX_EXEMPLARS + 1)] + [
        (6060, 3, 7.0, (7).to_bytes(16, "big"), b"\x01" * 8)]


def test_a_point_without_exemplars_has_no_exemplar_rows() -> None:
    assert encode_metrics([_gauge(MINUTE_NS, [])], ResourceRows(1))[2] == []
