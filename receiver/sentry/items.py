"""What each item of an envelope becomes: `event` an ErrorEvent, `transaction` and
`span` (streamed spans, @sentry/node's default) spans, `session` and `sessions`
session counts (receiver/sentry/sessions.py), `feedback` and `user_report` user
feedback (receiver/sentry/feedback.py), `check_in` a CheckIn (receiver/sentry/checkin.py),
`log` and `otel_log` log records (receiver/sentry/logs.py), `trace_metric` metric
points (receiver/sentry/trace_metrics.py), every other type nothing (counted by the
door, never refused: an SDK must not see an error for sending a client report; a
session or feedback item that cannot be read is dropped alone and counted). Pure: a
parsed envelope in, records out; a payload that is not a JSON object is refused
naming its item, except a log's or a metric's: those items are batches the SDK sends
apart from any event, and one that cannot be read at all is dropped alone, counted
as one record of its kind with its reason.

The store endpoint's body is one event, read here as an envelope of one item.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from model.errors import InvalidInput
from model.records import CheckIn, ErrorEvent, Feedback, LogRecord, MetricPoint, SessionCount, Span
from receiver.jsonbody import parse_json
from receiver.otlp.decode_logs import DecodedLogs
from receiver.otlp.decode_traces import DecodedSpans
from receiver.otlp.json_rules import MAX_DROP_REASONS, Dropped
from receiver.otlp.metric_points import DecodedMetrics
from receiver.sentry.checkin import decode_check_in
from receiver.sentry.envelope import Envelope, Item, parse_envelope
from receiver.sentry.event import decode_event
from receiver.sentry.feedback import decode_feedback, decode_user_report
from receiver.sentry.logs import decode_log_items, decode_otel_log
from receiver.sentry.sessions import decode_session, decode_sessions, envelope_digest
from receiver.sentry.span_stream import decode_span_items
from receiver.sentry.trace_metrics import decode_metric_items
from receiver.sentry.transaction import decode_transaction
from receiver.sentry.values import hex_id

# The item types the metric names as they are; any other is counted as "unknown",
# so that a client cannot grow the metric's label set without bound.
KNOWN_TYPES = frozenset({
    "event", "transaction", "session", "sessions", "client_report", "attachment",
    "check_in", "profile", "profile_chunk", "replay_event", "replay_recording",
    "replay_video", "user_report", "feedback", "span", "log", "otel_log", "statsd",
    "metric_meta", "trace_metric", "security", "raw_security", "form_data", "nel",
    "unreal_report"})


# The item types that become records; the others are only counted.
RECORD_TYPES = frozenset({"event", "transaction", "span", "session", "sessions",
                          "feedback", "user_report", "check_in", "log", "otel_log",
                          "trace_metric"})
# The Batch fields they fill: what a decode worker hands back (runtime/offload.py).
RECORD_FIELDS = "errors,spans,sessions,feedback,check_ins,logs,metrics"


@dataclass
class Decoded:
    errors: list[ErrorEvent] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    sessions: list[SessionCount] = field(default_factory=list)
    feedback: list[Feedback] = field(default_factory=list)
    check_ins: list[CheckIn] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    metrics: list[MetricPoint] = field(default_factory=list)
    # The id Sentry answers with: the envelope's, else its event's or transaction's.
    event_id: str = ""
    # Items received, by type (a KNOWN_TYPES name or "unknown").
    items: Counter[str] = field(default_factory=Counter)
    # Spans of transactions dropped alone (bad ids or times); the rest are kept.
    dropped_spans: int = 0
    # Session and feedback items that could not be read (no release, no message).
    dropped_sessions: int = 0
    dropped_feedback: int = 0
    # Logs and metrics dropped alone (a bad record, or an item that could not be read).
    dropped_logs: int = 0
    dropped_metrics: int = 0
    reasons: list[str] = field(default_factory=list)

    @property
    def dropped(self) -> int:  # named as a decode worker reads it (runtime/offload.py)
        return sum(self.drops().values())

    def drops(self) -> dict[str, int]:
        """Records dropped alone, by signal (runtime/drops.py), named as the Batch
        fields they would have filled: a decode worker hands them back so
        (runtime/offload_worker.py), and the door counts each under its category."""
        return {"spans": self.dropped_spans, "sessions": self.dropped_sessions,
                "feedback": self.dropped_feedback, "logs": self.dropped_logs,
                "metrics": self.dropped_metrics}

    def _reasons(self, decoded: Dropped, index: int) -> None:
        self.reasons.extend(f"items[{index}].{reason}" for reason in
                            decoded.reasons[:MAX_DROP_REASONS - len(self.reasons)])

    def add_spans(self, spans: DecodedSpans) -> None:
        self.spans.extend(spans.spans)
        self.dropped_spans += spans.dropped
        self.reasons.extend(spans.reasons[:MAX_DROP_REASONS - len(self.reasons)])

    def add_logs(self, logs: DecodedLogs, index: int) -> None:
        self.logs.extend(logs.logs)
        self.dropped_logs += logs.dropped
        self._reasons(logs, index)

    def add_metrics(self, metrics: DecodedMetrics, index: int) -> None:
        self.metrics.extend(metrics.metrics)
        self.dropped_metrics += metrics.dropped
        self._reasons(metrics, index)


def decode_envelope_body(body: bytes, now_us: int) -> Decoded:
    """An envelope's records from its bytes: what a decode worker runs for a large
    envelope (receiver/sentry/door.py)."""
    return decode_envelope(parse_envelope(body), now_us, body)


def summary(envelope: Envelope) -> tuple[str, Counter[str]]:
    """The id an envelope is answered with and its items by type, without decoding
    its records: the event loop's part when a worker decodes them. The id is the
    envelope header's, which SDKs always send with an event or a transaction; else
    its event's or transaction's, read from that item alone."""
    items: Counter[str] = Counter(
        item.type if item.type in KNOWN_TYPES else "unknown" for item in envelope.items)
    event_id = _event_id(envelope.headers.get("event_id"))
    for index, item in enumerate(envelope.items):
        if event_id:
            break
        if item.type in ("event", "transaction"):
            event_id = _event_id(_payload(item, index, item.type == "event").get("event_id"))
    return event_id or uuid.uuid4().hex, items


def decode_envelope(envelope: Envelope, now_us: int, body: bytes = b"") -> Decoded:
    """`body` is the envelope's bytes: the marks of its pre-aggregated sessions are
    made from their digest (sessions.envelope_digest), so that a retry counts them
    once. Hashed only for an envelope that holds such an item: 12 KB of an error
    event cost blake2b about 130,000 instructions."""
    decoded = Decoded()
    digest = None
    event_id = _event_id(envelope.headers.get("event_id"))
    for index, item in enumerate(envelope.items):
        kind = item.type
        decoded.items[kind if kind in KNOWN_TYPES else "unknown"] += 1
        if kind == "event":
            event = _payload(item, index, bounded=True)
            decoded.errors.append(decode_event(event, now_us))
        elif kind == "transaction":
            event = _payload(item, index)
            decoded.add_spans(decode_transaction(event, now_us))
        elif kind == "span":
            # Streamed spans carry no event id to answer with.
            decoded.add_spans(decode_span_items(_payload(item, index), now_us))
            continue
        elif kind in ("session", "sessions"):
            payload = _payload(item, index)
            if kind == "sessions" and digest is None:
                digest = envelope_digest(body)
            counts = (decode_session(payload) if kind == "session"
                      else decode_sessions(payload, digest or b"", index))
            decoded.sessions.extend(counts)
            decoded.dropped_sessions += not counts
            continue
        elif kind in ("feedback", "user_report"):
            payload = _payload(item, index)
            said = (decode_feedback(payload, now_us) if kind == "feedback"
                    else decode_user_report(payload, now_us))
            if said is None:
                decoded.dropped_feedback += 1
            else:
                decoded.feedback.append(said)
            continue
        elif kind == "check_in":
            decoded.check_ins.append(
                decode_check_in(_payload(item, index), now_us, f"items[{index}]"))
            continue
        elif kind in ("log", "otel_log"):
            decode = decode_log_items if kind == "log" else decode_otel_log
            decoded.add_logs(decode(_batch_payload(item), now_us), index)
            continue
        elif kind == "trace_metric":
            decoded.add_metrics(decode_metric_items(_batch_payload(item), now_us), index)
            continue
        else:
            continue
        event_id = event_id or _event_id(event.get("event_id"))
    decoded.event_id = event_id or uuid.uuid4().hex
    return decoded


def decode_store(event: Any, now_us: int) -> Decoded:
    """The store endpoint's body, already parsed: one event, or a transaction when
    its `type` says so (the SDKs that still use the endpoint send only events)."""
    if not isinstance(event, dict):
        raise InvalidInput("the event must be a JSON object",
                           [{"field": "body", "error": "must be a JSON object"}])
    kind = "transaction" if event.get("type") == "transaction" else "event"
    decoded = Decoded(event_id=_event_id(event.get("event_id")) or uuid.uuid4().hex)
    decoded.items[kind] += 1
    if kind == "transaction":
        decoded.add_spans(decode_transaction(event, now_us))
    else:
        decoded.errors.append(decode_event(event, now_us))
    return decoded


def _payload(item: Item, index: int, bounded: bool = False) -> dict[str, Any]:
    """`bounded`: an event's, which its decoder reads within bounds of its own
    (receiver/jsonbody.parse_json), so that nesting past MAX_DEPTH is cut, as Sentry
    normalises an event, rather than refused."""
    field_name = f"items[{index}]"
    try:
        value = parse_json(item.payload, bounded)
    except InvalidInput as exc:
        problem = exc.details[0]["error"] if exc.details else exc.message
        raise InvalidInput("the envelope is malformed", [
            {"field": field_name, "error": f"the {item.type} payload is not valid JSON: "
                                           f"{problem}"}]) from exc
    if not isinstance(value, dict):
        raise InvalidInput("the envelope is malformed", [
            {"field": field_name, "error": f"the {item.type} payload must be a JSON object"}])
    return value


def _batch_payload(item: Item) -> Any:
    """A log or metric batch's payload, parsed; None when it is not JSON, which its
    decoder drops as one record that could not be read (the rest of the envelope is
    kept: an SDK sends these batches in envelopes of their own, but a proxy may not)."""
    try:
        return parse_json(item.payload)
    except InvalidInput:
        return None


def _event_id(value: Any) -> str:
    """A Sentry event id as Sentry writes it (32 lowercase hex digits), from that
    form or a dashed UUID (values.hex_id, the rule every id of the door is read by);
    "" for anything else."""
    return hex_id(value, 32) or ""
