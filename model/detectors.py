"""Performance problems found in a complete trace: the detectors, their thresholds and
what each finding is called and grouped by.

The spans a detector reads are a trace's *facts* (`Fact`): its database calls (by
normalised statement, model/statement.py), its outgoing HTTP calls, and its local
roots (the server and consumer spans, and the trace's root: the transaction or route
a problem happened in). The spanmetrics processor notes them as spans go by
(processors/operations.py); the writer gathers a trace's facts until no new one has
come for a while, then runs `detect` over them (storage/writer/detect.py).

The detectors, with Sentry's documented rules as their defaults:

- **N+1 query** (`n_plus_one`): at least `min_spans` database spans under one parent,
  one after the other (none starting before the previous ended), with the same
  normalised statement, taking more than `min_total_ms` together.
- **Slow DB query** (`slow_query`): a SELECT taking at least `min_ms`.
- **Consecutive HTTP** (`consecutive_http`): at least `min_calls` HTTP calls (GET,
  POST, PUT, PATCH, DELETE) under one parent, one after the other, each taking at
  least `min_call_ms`, none starting more than `max_gap_ms` after the previous ended,
  whose running side by side would save at least `min_saved_ms` (their total less the
  longest).

A finding's group is its service, transaction, problem and statement (or calls): the
same N+1 on every request is one issue. Standard library only: the writer process
runs the detectors without the record types.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

from model.fingerprint import with_parts

ROOT, DATABASE, HTTP = 1, 2, 3  # a fact's role
N_PLUS_ONE, SLOW_QUERY, CONSECUTIVE_HTTP = "n_plus_one", "slow_query", "consecutive_http"
PROBLEMS = (N_PLUS_ONE, SLOW_QUERY, CONSECUTIVE_HTTP)
TITLES = {N_PLUS_ONE: "N+1 query", SLOW_QUERY: "Slow DB query",
          CONSECUTIVE_HTTP: "Consecutive HTTP"}
# What Sentry's detector accepts as an HTTP call worth running side by side.
_HTTP_METHODS = ("GET ", "POST ", "PUT ", "PATCH ", "DELETE ")
# Every finding's fingerprint starts with this part, so that no error's can equal one.
ISSUE_TYPE = "performance"


class Fact(NamedTuple):
    """What a detector needs of one span. `name`: a root's transaction or route
    ("GET /orders/<int:order>"), a database call's normalised statement, an HTTP
    call's method and target ("GET inventory:5001"). `release` and `environment`
    are a root's (its resource's `service.version` and environment)."""

    trace_id: str
    span_id: str
    parent_span_id: str
    role: int
    service: str
    name: str
    start_ns: int
    end_ns: int
    release: str = ""
    environment: str = ""


@dataclass(frozen=True, slots=True)
class DetectorSettings:
    n_plus_one: bool = True
    n_plus_one_min_spans: int = 5
    n_plus_one_min_total_ms: float = 50.0
    slow_query: bool = True
    slow_query_min_ms: float = 500.0
    consecutive_http: bool = True
    consecutive_http_min_calls: int = 3
    consecutive_http_min_call_ms: float = 500.0
    consecutive_http_max_gap_ms: float = 500.0
    consecutive_http_min_saved_ms: float = 2000.0

    @property
    def any(self) -> bool:
        return self.n_plus_one or self.slow_query or self.consecutive_http

    def as_row(self) -> tuple[Any, ...]:
        """The settings as plain values, in field order (the writer's wire row)."""
        return tuple(getattr(self, f.name) for f in fields(self))


# The mapping form: {detector: {"enabled": bool, threshold: number}}, the field of each.
_THRESHOLDS = {
    N_PLUS_ONE: {"min_spans": "n_plus_one_min_spans",
                 "min_total_ms": "n_plus_one_min_total_ms"},
    SLOW_QUERY: {"min_ms": "slow_query_min_ms"},
    CONSECUTIVE_HTTP: {"min_calls": "consecutive_http_min_calls",
                       "min_call_ms": "consecutive_http_min_call_ms",
                       "max_gap_ms": "consecutive_http_max_gap_ms",
                       "min_saved_ms": "consecutive_http_min_saved_ms"},
}


def detector_settings(raw: Any, path: str = "detectors",
                      base: DetectorSettings | None = None) -> DetectorSettings:
    """The settings `raw` (the mapping form) gives, each one not given taken from
    `base`. Raises ValueError naming the bad key."""
    base = base or DetectorSettings()
    if raw is None:
        return base
    if not isinstance(raw, dict):
        raise ValueError(f"{path} must be a mapping, got {type(raw).__name__}")
    values = dict(zip((f.name for f in fields(base)), base.as_row(), strict=True))
    for problem, given in raw.items():
        if problem not in _THRESHOLDS:
            raise ValueError(f"{path}.{problem} is not a detector (known: "
                             f"{', '.join(PROBLEMS)})")
        if not isinstance(given, dict):
            raise ValueError(f"{path}.{problem} must be a mapping, got {type(given).__name__}")
        known = _THRESHOLDS[problem]
        for key, value in given.items():
            where = f"{path}.{problem}.{key}"
            if key == "enabled":
                if not isinstance(value, bool):
                    raise ValueError(f"{where} must be true or false, got {value!r}")
                values[problem] = value
            elif key in known:
                integer = known[key].endswith(("_spans", "_calls"))
                if isinstance(value, bool) or not isinstance(value, int | float) \
                        or value < 0 or (integer and value != int(value)):
                    kind = "a whole number" if integer else "a number"
                    raise ValueError(f"{where} must be {kind}, 0 or more, got {value!r}")
                values[known[key]] = int(value) if integer else float(value)
            else:
                raise ValueError(f"{where} is not a setting (known: enabled, "
                                 f"{', '.join(known)})")
    return DetectorSettings(**values)


def detector_mapping(settings: DetectorSettings) -> dict[str, Any]:
    """The mapping form of `settings`, as the read API shows it."""
    return {problem: {"enabled": getattr(settings, problem),
                      **{key: getattr(settings, name) for key, name in known.items()}}
            for problem, known in _THRESHOLDS.items()}


@dataclass(frozen=True, slots=True)
class Finding:
    problem: str  # one of PROBLEMS
    service: str
    transaction: str  # the local root's name, "" when the trace holds none
    subject: str  # the statement, or the calls ("GET a:1, GET b:2")
    parent_span_id: str
    span_ids: tuple[str, ...]  # the offending spans, in time order
    start_ns: int  # the first offending span's start
    total_ms: float  # the offending spans' time together
    release: str
    environment: str

    @property
    def title(self) -> str:
        return TITLES[self.problem]

    @property
    def fingerprint(self) -> str:
        """The group: the same problem, statement and place on every request."""
        return with_parts([ISSUE_TYPE, self.problem, self.service, self.transaction,
                           self.subject], "")


def _ms(fact: Fact) -> float:
    return max(fact.end_ns - fact.start_ns, 0) / 1_000_000


# Two spans one after the other may seem to overlap by a rounding: Sentry's SDKs send
# times as float seconds.
_TOUCH_NS = 10_000


def _sequential_runs(facts: list[Fact], max_gap_ns: int | None = None) -> list[list[Fact]]:
    """`facts` (sorted by start) cut into runs in which each starts no earlier than the
    one before ended (and, with `max_gap_ns`, at most that long after)."""
    runs: list[list[Fact]] = []
    for fact in facts:
        if runs:
            last = runs[-1][-1]
            if fact.start_ns >= last.end_ns - _TOUCH_NS and (
                    max_gap_ns is None or fact.start_ns - last.end_ns <= max_gap_ns):
                runs[-1].append(fact)
                continue
        runs.append([fact])
    return runs


class _Roots:
    """Which transaction a span belongs to: the innermost root of its service whose
    time holds it (the trace's facts carry no chain of parents between them)."""

    def __init__(self, roots: list[Fact]) -> None:
        self.roots = sorted(roots, key=lambda r: r.end_ns - r.start_ns)

    def of(self, fact: Fact) -> Fact | None:
        for root in self.roots:
            if (root.service == fact.service and root.start_ns <= fact.start_ns
                    and fact.end_ns <= root.end_ns):
                return root
        # None holds it: the service's only root, if it has exactly one.
        own = [r for r in self.roots if r.service == fact.service]
        return own[0] if len(own) == 1 else None


def _finding(problem: str, run: Sequence[Fact], subject: str, roots: _Roots) -> Finding:
    first = run[0]
    root = roots.of(first)
    return Finding(problem=problem, service=first.service,
                   transaction=root.name if root is not None else "",
                   subject=subject, parent_span_id=first.parent_span_id,
                   span_ids=tuple(f.span_id for f in run), start_ns=first.start_ns,
                   total_ms=sum(_ms(f) for f in run),
                   release=root.release if root is not None else "",
                   environment=root.environment if root is not None else "")


def detect(facts: Iterable[Fact], settings: DetectorSettings) -> list[Finding]:
    """The problems of one complete trace, at most one per problem, place and subject
    (a trace that repeats an N+1 under two parents counts it once)."""
    roots: list[Fact] = []
    by_parent: dict[tuple[int, str], list[Fact]] = {}
    for fact in facts:
        if fact.role == ROOT:
            roots.append(fact)
        else:
            by_parent.setdefault((fact.role, fact.parent_span_id), []).append(fact)
    places = _Roots(roots)
    found: dict[str, Finding] = {}

    def keep(finding: Finding) -> None:
        found.setdefault(finding.fingerprint, finding)

    # Most of a trace's database calls are ones no detector finds anything in (every
    # call is noted, processors/tracefacts.py): a parent with too few for an N+1 is
    # not grouped by statement, and a call is timed against the slow query's
    # threshold in integer nanoseconds, without a call.
    slow_ns = settings.slow_query_min_ms * 1_000_000 if settings.slow_query else None
    n_min = settings.n_plus_one_min_spans if settings.n_plus_one else None
    for (role, _parent), children in by_parent.items():
        if len(children) > 1:
            children.sort(key=lambda f: f.start_ns)
        if role == DATABASE:
            if n_min is not None and len(children) >= n_min:
                _n_plus_one(children, settings, places, keep)
            if slow_ns is not None:
                for fact in children:
                    if (fact.end_ns - fact.start_ns >= slow_ns
                            and fact.name[:7].upper().startswith("SELECT")):
                        keep(_finding(SLOW_QUERY, [fact], fact.name, places))
        elif role == HTTP and settings.consecutive_http:
            _consecutive_http(children, settings, places, keep)
    return list(found.values())


def _n_plus_one(children: list[Fact], settings: DetectorSettings, places: _Roots,
                keep: Any) -> None:
    by_statement: dict[str, list[Fact]] = {}
    for fact in children:
        by_statement.setdefault(fact.name, []).append(fact)
    for statement, same in by_statement.items():
        if len(same) < settings.n_plus_one_min_spans:
            continue
        for run in _sequential_runs(same):
            if (len(run) >= settings.n_plus_one_min_spans
                    and sum(_ms(f) for f in run) > settings.n_plus_one_min_total_ms):
                keep(_finding(N_PLUS_ONE, run, statement, places))


def _consecutive_http(children: list[Fact], settings: DetectorSettings, places: _Roots,
                      keep: Any) -> None:
    calls = [f for f in children if f.name.upper().startswith(_HTTP_METHODS)
             and _ms(f) >= settings.consecutive_http_min_call_ms]
    if len(calls) < settings.consecutive_http_min_calls:
        return
    gap = int(settings.consecutive_http_max_gap_ms * 1_000_000)
    for run in _sequential_runs(calls, gap):
        durations = [_ms(f) for f in run]
        if (len(run) >= settings.consecutive_http_min_calls
                and sum(durations) - max(durations) >= settings.consecutive_http_min_saved_ms):
            subject = ", ".join(dict.fromkeys(f.name for f in run))
            keep(_finding(CONSECUTIVE_HTTP, run, subject, places))
