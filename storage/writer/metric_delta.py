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

A value here is the JSON-able dict the state column holds: {"value"} for a sum,
{"count", "sum", "buckets"} for a histogram, `buckets` as stored in metric_points.
"""

from __future__ import annotations

from typing import Any

State = dict[str, Any]


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


def _buckets_delta(kind: str, new: dict[str, Any], old: dict[str, Any]
                   ) -> dict[str, Any] | None:
    """The buckets of new minus old, or None when they do not subtract (a reset, or
    explicit bounds that changed)."""
    if kind == "histogram":
        if new.get("bounds") != old.get("bounds"):
            return None
        counts, before = new.get("counts") or [], old.get("counts") or []
        if not before:
            return dict(new)
        if len(counts) != len(before):
            return None
        delta = [a - b for a, b in zip(counts, before, strict=True)]
        return None if any(d < 0 for d in delta) else {**new, "counts": delta}
    # Exponential: compare at the lower of the two scales (an SDK only lowers it).
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


def delta(kind: str, start_ns: int, time_ns: int, point: State,
          state: tuple[int, int, State] | None) -> tuple[int, State, bool] | None:
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
        diff = point["value"] - old["value"]
        return (start_ns, point, True) if diff < 0 else (old_time, {"value": diff}, False)
    count = point["count"] - old["count"]
    if count < 0:
        return start_ns, point, True
    buckets = _buckets_delta(kind, point["buckets"], old["buckets"])
    if buckets is None:
        return start_ns, point, True
    total = None
    if point.get("sum") is not None and old.get("sum") is not None:
        total = point["sum"] - old["sum"]
    return old_time, {"count": count, "sum": total, "buckets": buckets}, False
