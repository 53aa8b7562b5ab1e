"""model/detectors.py: each detector's rule at and around its thresholds, what a
finding is grouped by, and the settings' mapping form."""

from __future__ import annotations

import pytest

from model.detectors import (
    CONSECUTIVE_HTTP,
    DATABASE,
    HTTP,
    N_PLUS_ONE,
    ROOT,
    SLOW_QUERY,
    DetectorSettings,
    Fact,
    detect,
    detector_mapping,
    detector_settings,
)

MS = 1_000_000
TRACE = "ab" * 16
ROUTE = Fact(TRACE, "r" * 16, "", ROOT, "shop", "GET /orders/<int:order>", 0, 2_000 * MS,
             "1.0", "prod")
SELECT = "SELECT item FROM lines WHERE id = ?"


def _calls(n: int, ms: float, *, role: int = DATABASE, name: str = SELECT,
           parent: str = "r" * 16, gap_ms: float = 0.5, start_ms: float = 1.0,
           service: str = "shop") -> list[Fact]:
    out, at = [], start_ms
    for i in range(n):
        out.append(Fact(TRACE, f"{i:016x}", parent, role, service, name,
                        int(at * MS), int((at + ms) * MS)))
        at += ms + gap_ms
    return out


def test_five_sequential_queries_over_50_ms_are_one_n_plus_one_of_their_route() -> None:
    found = detect([ROUTE, *_calls(5, 11)], DetectorSettings())
    assert [f.problem for f in found] == [N_PLUS_ONE]
    f = found[0]
    assert (f.title, f.service, f.transaction, f.subject) == (
        "N+1 query", "shop", "GET /orders/<int:order>", SELECT)
    assert len(f.span_ids) == 5 and f.total_ms == pytest.approx(55)
    assert (f.release, f.environment, f.parent_span_id) == ("1.0", "prod", "r" * 16)


@pytest.mark.parametrize(("n", "ms"), [(4, 20), (5, 10), (6, 8)])
def test_fewer_than_five_or_not_over_50_ms_is_no_n_plus_one(n: int, ms: float) -> None:
    assert detect([ROUTE, *_calls(n, ms)], DetectorSettings()) == []


def test_queries_run_side_by_side_are_no_n_plus_one() -> None:
    overlapping = _calls(6, 20, gap_ms=-10)  # each starts before the previous ended
    assert detect([ROUTE, *overlapping], DetectorSettings()) == []


def test_different_statements_or_parents_are_not_added_together() -> None:
    mixed = _calls(3, 20) + _calls(3, 20, name="SELECT other FROM t WHERE id = ?",
                                   start_ms=100)
    split = _calls(3, 20) + _calls(3, 20, parent="p" * 16, start_ms=100)
    assert detect([ROUTE, *mixed], DetectorSettings()) == []
    assert detect([ROUTE, *split], DetectorSettings()) == []


def test_the_same_n_plus_one_under_two_parents_of_one_trace_is_one_finding() -> None:
    twice = _calls(5, 12) + _calls(5, 12, parent="p" * 16, start_ms=200)
    found = detect([ROUTE, *twice], DetectorSettings())
    assert len(found) == 1
    assert found[0].fingerprint == detect([ROUTE, *_calls(5, 12)],
                                          DetectorSettings())[0].fingerprint


def test_the_fingerprint_follows_service_route_problem_and_statement() -> None:
    base = detect([ROUTE, *_calls(5, 12)], DetectorSettings())[0].fingerprint
    other_route = ROUTE._replace(name="GET /carts")
    other_service = [f._replace(service="billing") for f in _calls(5, 12)]
    assert detect([other_route, *_calls(5, 12)], DetectorSettings())[0].fingerprint != base
    assert detect(other_service, DetectorSettings())[0].fingerprint != base
    assert detect([ROUTE, *_calls(5, 12, name="SELECT x FROM y")],
                  DetectorSettings())[0].fingerprint != base


def test_a_span_with_no_root_of_its_service_has_no_transaction() -> None:
    found = detect(_calls(5, 12), DetectorSettings())
    assert found[0].transaction == "" and found[0].release == ""


def test_a_slow_select_is_found_and_a_slow_write_is_not() -> None:
    slow = _calls(1, 500)
    write = _calls(1, 900, name="UPDATE lines SET item = ? WHERE id = ?")
    assert [f.problem for f in detect([ROUTE, *slow], DetectorSettings())] == [SLOW_QUERY]
    assert detect([ROUTE, *_calls(1, 499)], DetectorSettings()) == []
    assert detect([ROUTE, *write], DetectorSettings()) == []


def test_three_slow_calls_one_after_the_other_are_consecutive_http() -> None:
    calls = _calls(3, 1_100, role=HTTP, name="GET inventory:5001", gap_ms=100)
    found = detect([ROUTE, *calls], DetectorSettings())
    assert [f.problem for f in found] == [CONSECUTIVE_HTTP]
    assert found[0].subject == "GET inventory:5001"


@pytest.mark.parametrize("calls", [
    _calls(2, 3_000, role=HTTP, name="GET a:1"),  # two calls
    _calls(3, 400, role=HTTP, name="GET a:1"),  # each under 500 ms
    _calls(3, 900, role=HTTP, name="GET a:1"),  # saves 1.8 s, under 2 s
    _calls(3, 1_100, role=HTTP, name="GET a:1", gap_ms=600),  # 600 ms apart
    _calls(3, 1_100, role=HTTP, name="CONNECT a:1"),  # not a method Sentry counts
], ids=["two", "short", "small-saving", "far-apart", "method"])
def test_calls_short_of_a_threshold_are_no_consecutive_http(calls: list[Fact]) -> None:
    assert detect([ROUTE, *calls], DetectorSettings()) == []


def test_settings_lower_or_turn_off_each_detector() -> None:
    eager = detector_settings({"n_plus_one": {"min_spans": 3, "min_total_ms": 0}})
    assert [f.problem for f in detect([ROUTE, *_calls(3, 1)], eager)] == [N_PLUS_ONE]
    off = detector_settings({"n_plus_one": {"enabled": False},
                             "slow_query": {"enabled": False}})
    assert detect([ROUTE, *_calls(5, 600)], off) == []
    assert not detector_settings({"n_plus_one": {"enabled": False},
                                  "slow_query": {"enabled": False},
                                  "consecutive_http": {"enabled": False}}).any


def test_the_mapping_form_reads_back_and_layers_over_a_base() -> None:
    base = detector_settings({"slow_query": {"min_ms": 200}})
    layered = detector_settings({"n_plus_one": {"min_spans": 10}}, base=base)
    assert (layered.slow_query_min_ms, layered.n_plus_one_min_spans) == (200.0, 10)
    assert detector_settings(detector_mapping(layered)) == layered


@pytest.mark.parametrize(("raw", "named"), [
    ({"n_plus_two": {}}, "detectors.n_plus_two is not a detector"),
    ({"n_plus_one": {"min_spans": 2.5}}, "detectors.n_plus_one.min_spans must be a whole"),
    ({"slow_query": {"min_ms": -1}}, "detectors.slow_query.min_ms must be a number"),
    ({"slow_query": {"enabled": "yes"}}, "detectors.slow_query.enabled must be true"),
    ({"slow_query": {"max_ms": 1}}, "detectors.slow_query.max_ms is not a setting"),
    ({"slow_query": 5}, "detectors.slow_query must be a mapping"),
])
def test_a_bad_setting_is_named(raw: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        detector_settings(raw)
