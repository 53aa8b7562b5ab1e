"""What a Sentry event says of its group, read for the grouping processor
(processors/grouping.py), which decides the fingerprint by model/fingerprint.py.

Sounding's rule reads the innermost in-app frame of the raised exception (else its
innermost frame), rendered here as its platform's traceback prints it
(receiver/sentry/frames.frame_line). So an exception reported by Python's sentry-sdk
and by the Python OpenTelemetry SDK (whose text traceback ends with the same
`File ...` line) lands in one group, and likewise @sentry/node and the OpenTelemetry
JavaScript SDK (`at fn (/abs/file.js:L:C)`). A message event is grouped by its
template (logentry.message when sent: `failed for %s`, not `failed for bob`), so that
its parameters do not split the group.

The event's own `fingerprint` array is carried as parts (model.fingerprint.with_parts
says what they mean): at most MAX_PARTS parts of MAX_PART characters are read; a part
that is not a string is read as Sentry prints it (numbers) or skipped.
"""

from __future__ import annotations

from typing import Any

from model.fingerprint import Grouping
from receiver.sentry.frames import frame_line, top_frame
from receiver.sentry.values import text

MAX_PARTS = 20
MAX_PART = 200
MESSAGE_TYPE = "Message"  # the exception class of an event without an exception


def grouping_of(event: dict[str, Any], raised: dict[str, Any] | None, platform: str,
                template: str) -> Grouping:
    """What the rule reads of the raised exception, or of the message `template` when
    the event has no exception, and the event's `fingerprint` parts."""
    raw = event.get("fingerprint")
    parts = None if not isinstance(raw, list) else [
        p for p in (text(item, MAX_PART) for item in raw[:MAX_PARTS]) if p is not None]
    if raised is None:
        return Grouping(MESSAGE_TYPE, template, "", parts)
    top = top_frame(raised["frames"])
    line = "" if top is None else frame_line(top, platform)
    return Grouping(raised.get("type", ""), raised.get("value", ""), line, parts)
