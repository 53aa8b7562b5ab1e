"""Each kind of record scrubbed: where in a span, a log record, a metric point, an
error and a user's feedback the rules apply (see processors/scrub/__init__.py)."""

from __future__ import annotations

from typing import Any

from model.records import ErrorEvent, Feedback, LogRecord, MetricPoint, Span
from processors.scrub.hints import Found
from processors.scrub.rules import REMOVE
from processors.scrub.scrubber import Scrubber


def scrub_resource(scrubber: Scrubber, attributes: dict[str, Any], seen: set[int]) -> None:
    """Resource attributes are shared by the records of one resource: scrubbed once."""
    if id(attributes) not in seen:
        seen.add(id(attributes))
        scrubber.shallow(attributes)



def scrub_span(scrubber: Scrubber, span: Span, suspect: bool = True,
               found: Found | None = None) -> None:
    """`suspect`: for a span still unread, whether `suspects` named it (and what its
    batch holds, `found`)."""
    otlp = span.otlp
    if span.untouched and otlp is not None:
        if not suspect:
            return  # most spans: left unread, stored in the bytes they came in
        if scrubber.suspect_pairs(otlp.attributes, found):
            scrubber.mapping(span.attributes)
        if span.has_events() and any(scrubber.suspect_pairs(e.attributes, found)
                                     for e in otlp.events):
            for event in span.events:
                scrubber.mapping(event.get("attributes") or {})
        return
    scrubber.mapping(span.attributes)
    for event in span.events:
        attributes = event.get("attributes")
        if attributes:
            scrubber.mapping(attributes)


def scrub_log(scrubber: Scrubber, record: LogRecord, suspect: bool = True,
              found: Found | None = None) -> None:
    otlp = record.otlp
    if record.untouched and otlp is not None:
        if not suspect:
            return
        if scrubber.suspect_pairs(otlp.attributes, found):
            scrubber.mapping(record.attributes)
        if otlp.HasField("body") and scrubber.suspect_any(otlp.body, found):
            record.body = _kept(scrubber.value(record.body, "body"))
        return
    scrubber.mapping(record.attributes)
    if record.body is not None:
        record.body = _kept(scrubber.value(record.body, "body"))


def scrub_point(scrubber: Scrubber, point: MetricPoint) -> None:
    scrubber.shallow(point.attributes)
    for exemplar in point.exemplars:
        attributes = exemplar.get("attributes")
        if attributes:
            scrubber.mapping(attributes)


def scrub_error(scrubber: Scrubber, error: ErrorEvent) -> None:
    grouping = error.grouping
    values = [e.get("value") for e in error.exceptions or ()]
    texts = [error.message, error.user_id or "", *(v for v in values if isinstance(v, str)),
             *([grouping.message, *(grouping.parts or ())] if grouping is not None else [])]
    # The quick tests asked once of all its texts: each text is then asked only those
    # passed (most errors: none, and no text is searched at all).
    found = None if scrubber.has_custom else \
        scrubber.found("\0".join(texts).lower().encode("utf-8", "surrogatepass"))
    error.message = scrubber.text(error.message, found)
    if error.params:
        scrubber.shallow(error.params)
    if error.tags:
        scrubber.shallow(error.tags)
    if error.context:
        scrubber.shallow(error.context)
    for exception in error.exceptions or ():
        value = exception.get("value")
        if isinstance(value, str):
            exception["value"] = scrubber.text(value, found)
    if error.user_id is not None:
        action = scrubber.key_action("user.id") or scrubber.key_action("user_id")
        if action is not None:
            kept = scrubber.apply(action, error.user_id)
            error.user_id = None if kept is REMOVE else kept
        else:
            error.user_id = scrubber.text(error.user_id, found)
    if grouping is not None:
        grouping.message = scrubber.text(grouping.message, found)
        if grouping.parts is not None:
            grouping.parts = [scrubber.text(part, found) for part in grouping.parts]


def _kept(value: Any) -> Any:
    return None if value is REMOVE else value



def scrub_feedback(scrubber: Scrubber, said: Feedback) -> None:
    """User feedback (Sentry's `feedback` and `user_report` items): what the user wrote,
    their name and the page by the value rules; their email by the optional email
    rule, as any other value."""
    said.message = scrubber.text(said.message)
    for name in ("name", "email", "url"):
        value = getattr(said, name)
        if value is not None:
            setattr(said, name, scrubber.text(value))

