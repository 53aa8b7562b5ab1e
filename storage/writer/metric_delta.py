"""Cumulative metric points to deltas: the rules, pure (no database).

SDKs export cumulative values by default: a counter's total since `start_ns`, a
histogram's counts since then. Sounding stores what happened between two points,
so that a chart adds points up and the request rollups count each request once.
The writer (storage/writer/points.py) keeps the last cumulative point of each
series in the store and applies these rules inside the commit's transaction:

- no state yet: a point with a start time is a delta from that start (its whole
  value); a point without one only becomes the state (nothing is known of what
  came before it);
- a point at the same time as the state, or older: already counted (a re-sent
  request, or an older point arriving late, whose interval the state covers);
- a start time other than the state's, or any value lower than the state's: the
  process restarted (a reset); the point's whole value is the delta;
- otherwise the delta is the point minus the state.

A sum whose value is not finite (stored as null) is no point to convert: the writer
stores it as it came and keeps the state; a state without a value (written so before)
is as no state for a point without a start time: the point only becomes the state.

The values of a point or a state, as the writer keeps them in memory (`Values`): a
sum's value (a number); an explicit histogram's (count, sum, bounds, counts), lists
as the bucket columns hold them, so that the buckets subtract in one pass over two
lists; an exponential histogram's dict {"count", "sum", "buckets"}, `buckets` as
stored in metric_points. The state column holds them as JSON ({"value"} for a sum,
{"count", "sum", "buckets"} for a histogram): `from_json` reads it back.
"""

from __future__ import annotations

from operator import sub
from typing import Any

Values = Any  # see the module: a number, a Histogram or a dict, by kind
Histogram = tuple[int, float | None, list[float], list[int]]
State = dict[str, Any]


def from_json(kind: str, state: State) -> Values:
    """The values of a state column's JSON, as `delta` takes them for `kind`."""
    if kind == "sum":
        return state["value"]
    if kind == "histogram":
        return histogram(state["count"], state.get("sum"), state.get("buckets") or {})
    return state


def histogram(count: int, total: float | None, buckets: dict[str, Any]) -> Histogram:
    """An explicit histogram's values from its count, sum and buckets as stored
    ({"bounds", "counts"}, parsed): a state's or a point's."""
    return (count, total, buckets.get("bounds") or [], buckets.get("counts") or [])


class Skip(Exception):
    """The point was counted already."""


def _downscale(offset: int, counts: list[int], by: int) -> tuple[int, list[int]]:
    """Exponential buckets at a scale `by` lower: 2^by neighbours merge into one."""
    if by <= 0 or not counts:
        return offset, list(counts)
    new_offset = offset >> by
    out = [0] * (((offset + len(counts) - 1) >> by) - new_offset + 1)
    for i, n in enumerate(counts):
        out[((offset + i) >> by) - new_offset] += n
    return new_offset, out


def _minus(offset: int, counts: list[int], old_offset: int, old: list[int]
           ) -> tuple[int, list[int]] | None:
    """counts - old, aligned by bucket index; None if any bucket went down."""
    if not old:
        return offset, list(counts)
    if not counts or old_offset < offset or old_offset + len(old) > offset + len(counts):
        return None if any(old) else (offset, list(counts))
    out = list(counts)
    for i, n in enumerate(old):
        j = old_offset - offset + i
        out[j] -= n
        if out[j] < 0:
            return None
    return offset, out


def _exponential_delta(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any] | None:
    """The exponential buckets of new minus old, or None when they do not subtract (a
    reset). Compared at the lower of the two scales (an SDK only lowers it)."""
    scale = min(new["scale"], old["scale"])
    out = {**new, "scale": scale, "zero_count": new["zero_count"] - old["zero_count"]}
    if out["zero_count"] < 0:
        return None
    for side in ("positive", "negative"):
        a = _downscale(new[side]["offset"], new[side]["counts"], new["scale"] - scale)
        b = _downscale(old[side]["offset"], old[side]["counts"], old["scale"] - scale)
        diff = _minus(*a, *b)
        if diff is None:
            return None
        out[side] = {"offset": diff[0], "counts": diff[1]}
    return out


def _histogram_delta(point: Histogram, old: Histogram) -> Histogram | None:
    """An explicit histogram's point minus its state, or None when they do not
    subtract (a count or a bucket that went down, or other bounds: a reset)."""
    count, total, bounds, counts = point
    old_count, old_total, old_bounds, before = old
    if count < old_count or bounds != old_bounds:
        return None
    if before:
        if len(counts) != len(before):
            return None
        counts = list(map(sub, counts, before))  # one pass, in C
        if min(counts) < 0:
            return None
    return (count - old_count, _total(total, old_total), bounds, counts)


def _total(total: float | None, old: float | None) -> float | None:
    """A histogram's sum minus its state's: None when either has none."""
    return None if total is None or old is None else total - old


def delta(kind: str, start_ns: int, time_ns: int, point: Values,
          state: tuple[int, int, Values] | None) -> tuple[int, Values, bool] | None:
    """(the delta's start, its values, whether it is the point's whole value) for a
    cumulative `point` of a series whose last state is `state` ((start_ns, time_ns,
    values), or None); None when there is no delta to store (a first point without a
    start time). Raises Skip for a point counted already."""
    if state is None:
        return (start_ns, point, True) if start_ns else None
    old_start, old_time, old = state
    if time_ns <= old_time:
        raise Skip
    if start_ns != old_start:
        return start_ns, point, True
    if kind == "sum":
        if old is None:  # a state without a value: as no state without a start time
            return None
        diff = point - old
        return (start_ns, point, True) if diff < 0 else (old_time, diff, False)
    if kind == "histogram":
        found = _histogram_delta(point, old)
        return (start_ns, point, True) if found is None else (old_time, found, False)
    count = point["count"] - old["count"]
    if count < 0:
        return start_ns, point, True
    buckets = _exponential_delta(point["buckets"], old["buckets"])
    if buckets is None:
        return start_ns, point, True
    return old_time, {"count": count, "sum": _total(point.get("sum"), old.get("sum")),
                      "buckets": buckets}, False
