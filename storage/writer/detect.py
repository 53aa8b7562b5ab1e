"""Performance issues: the writer gathers each trace's facts (model/detectors.py) as
its batches are committed, runs the detectors once the trace is complete, and stores
what they find as occurrences of `performance` issue groups, through the same group
commit as errors (storage/writer/commit.py): the groups' counts, reopening,
resolve-in-next-release, snoozes, merges and alert facts are the errors' own.

A trace is complete when no fact of it has come for `wait_s` (the SQL exporter's
`trace_wait_s`): an OpenTelemetry SDK exports a request's spans in batches some
seconds apart (or, with SimpleSpanProcessor, each span alone), sentry-sdk streams
them every few seconds, and a trace's services export apart from each other. Only
here is the whole trace: the spanmetrics processor notes every database call of a
batch (processors/tracefacts.py), and whether a statement repeats under its parent,
or a root names its calls, is decided over the facts of every batch of the trace,
however they were cut.

Bounded in three ways, each past its bound examining the oldest traces early, with
what they have (a part of a trace examined early finds what that part holds; the
rest, when it comes, is examined as a trace of its own; the same finding in both
parts, under the same transaction, is still one occurrence, keyed by the trace):

- time: a trace is held `wait_s` after its last fact;
- traces: at most `max_traces` (MAX_TRACES) are held;
- facts: at most `max_held` (MAX_HELD) in all, about 330 bytes each as the bench's
  batches unpickle (bench/detect_cost.py), so some 170 MB at most. What the bound
  costs: past some 50,000 database calls a second, a trace is examined before
  `wait_s`, and one whose spans come further apart than the writer holds can be
  examined in parts (an N+1 split across them is found only in a part holding
  enough of its calls; a part without its root names no transaction);

and at most `max_facts` (MAX_FACTS) facts per trace (the rest are counted and left
out: a trace that holds that many calls shows its problems in the first ones).

What it costs to be here rather than in a stage that reads stored spans: nothing waits
on the database, and a finding's occurrence is keyed by its trace (the key makes a
trace examined twice, or a finding written again after a failed commit, one
occurrence). What it gives up: the facts of traces not yet complete are in memory, so a
restart forgets them (their requests' next repeat is found), and several collectors
writing one database each see the facts their own writer commits (a serve group's
workers share the leader's writer).
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from model.detectors import ISSUE_TYPE, DetectorSettings, Fact, Finding, detect
from model.groupcounts import count_errors
from storage import jsontext, rows
from storage.rows import Row, WireBatch
from storage.writer.group_deltas import group_rows, reopen_rows

MAX_TRACES = 20_000
MAX_FACTS = 2_000
MAX_HELD = 500_000
TraceKey = tuple[int, str]  # (project, trace id)
_FACT = Fact._make


class TraceWatch:
    """The facts of the traces not yet complete, oldest first by their last fact."""

    def __init__(self, wait_s: float, max_traces: int = MAX_TRACES,
                 max_held: int = MAX_HELD, max_facts: int = MAX_FACTS) -> None:
        self.wait_s = wait_s
        self.max_traces = max_traces
        self.max_held = max_held
        self.max_facts = max_facts
        # trace -> [time of its last fact, its facts]; least recently added to first.
        self._traces: OrderedDict[TraceKey, list[Any]] = OrderedDict()
        self.held = 0  # the facts of every trace held
        self._settings: dict[int, DetectorSettings] = {}
        self._parsed: dict[str, DetectorSettings] = {}  # settings JSON -> settings
        self._pending: list[WireBatch] = []
        self.facts_left_out = 0

    def note(self, batches: Sequence[WireBatch]) -> None:
        """The batches of a commit under way: their facts count once it commits."""
        self._pending = [b for b in batches if b.trace_facts]

    def committed(self, now: float) -> None:
        traces, max_facts = self._traces, self.max_facts
        for batch in self._pending:
            project_id = batch.project_id
            if batch.detectors:
                self._settings[project_id] = self._settings_of(batch.detectors[0][0])
            # A batch's facts come a span's after another, a trace's together: the
            # trace is looked up (and moved to the end, the latest) once per run.
            trace_id, facts = None, []
            for fact in batch.trace_facts:
                if fact[0] != trace_id:
                    trace_id = fact[0]
                    key = (project_id, trace_id)
                    held = traces.get(key)
                    if held is None:
                        held = traces[key] = [now, []]
                    else:
                        held[0] = now
                        traces.move_to_end(key)
                    facts = held[1]
                if len(facts) < max_facts:
                    facts.append(fact)
                    self.held += 1
                else:
                    self.facts_left_out += 1
        self._pending = []

    def _settings_of(self, text: str) -> DetectorSettings:
        found = self._parsed.get(text)
        if found is None:
            if len(self._parsed) > 1000:
                self._parsed.clear()
            found = self._parsed[text] = DetectorSettings(*json.loads(text))
        return found

    def _over(self) -> bool:
        return len(self._traces) > self.max_traces or self.held > self.max_held

    def seconds_to_next(self, now: float) -> float | None:
        """How long until the oldest trace is complete (0: now); None: none held."""
        if self._over():
            return 0.0
        for last, _ in self._traces.values():
            return max(last + self.wait_s - now, 0.0)
        return None

    def complete(self, now: float) -> list[tuple[int, list[Fact], DetectorSettings]]:
        """Take the traces complete at `now` (and the oldest past the bounds)."""
        out = []
        traces = self._traces
        while traces:
            key, (last, facts) = next(iter(traces.items()))
            if last + self.wait_s > now and not self._over():
                break
            del traces[key]
            self.held -= len(facts)
            settings = self._settings.get(key[0])
            if settings is not None:
                out.append((key[0], [_FACT(f) for f in facts], settings))
        return out

    def __len__(self) -> int:
        return len(self._traces)


def findings_of(complete: list[tuple[int, list[Fact], DetectorSettings]]
                ) -> dict[int, list[tuple[str, Finding]]]:
    """Per project, each finding of the complete traces with its trace id."""
    out: dict[int, list[tuple[str, Finding]]] = {}
    for project_id, facts, settings in complete:
        for finding in detect(facts, settings):
            out.setdefault(project_id, []).append((facts[0].trace_id, finding))
    return out


def _occurrence(trace_id: str, finding: Finding) -> Row:
    context = {"performance": {
        "problem": finding.problem, "transaction": finding.transaction,
        "subject": finding.subject, "parent_span_id": finding.parent_span_id,
        "span_ids": list(finding.span_ids), "count": len(finding.span_ids),
        "total_ms": round(finding.total_ms, 3)}}
    return rows.ERROR_EVENTS.row(
        fingerprint=finding.fingerprint, ts_us=finding.start_ns // 1000,
        exception_class=finding.title, message=finding.subject,
        backtrace="[]", params=None, source_context=None, request_id=None, user_id=None,
        trace_id=trace_id, span_id=finding.parent_span_id or None,
        service=finding.service or None, environment=finding.environment or None,
        release=finding.release or None, log_time_ns=None,
        # One occurrence per trace and problem, however often the trace is examined.
        occurrence_key=hashlib.sha256(
            f"{trace_id}\n{finding.fingerprint}".encode()).hexdigest()[:32],
        tags=jsontext.dumps_column({"issue.type": ISSUE_TYPE, "problem": finding.problem,
                                    "transaction": finding.transaction}),
        level="warning", exceptions=None, context=jsontext.dumps_column(context))


def findings_batches(found: dict[int, list[tuple[str, Finding]]]) -> list[WireBatch]:
    """The findings as wire batches of errors with their group deltas, one per project,
    for the writer's group commit."""
    out = []
    for project_id, findings in sorted(found.items()):
        errors = [_occurrence(trace_id, f) for trace_id, f in findings]
        groups = count_errors((f.fingerprint, f.start_ns // 1000, f.title, f.subject)
                              for _, f in findings)
        lists: dict[str, list[Row]] = {name: [] for name in WireBatch._fields[1:]}
        lists.update(errors=errors, groups=group_rows(groups.values()),
                     reopen=reopen_rows((fp, d.last_seen_us) for fp, d in groups.items()))
        out.append(WireBatch(project_id, **lists))
    return out


class FindingsWriter:
    """One commit of findings (`Database.transaction`'s writer): the errors' group
    commit, whose groups it inserts are `performance` ones."""

    def __init__(self, writer: Any) -> None:
        self.writer = writer  # storage/writer/commit.py's BatchWriter

    def write(self, cursor: Any, batches: Sequence[WireBatch], received_us: int) -> None:
        self.writer.write(cursor, batches, received_us, ISSUE_TYPE)

    def committed(self) -> None:
        self.writer.committed()
