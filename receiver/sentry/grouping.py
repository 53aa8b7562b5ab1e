"""Which group a Sentry event joins: its own `fingerprint` array, where
`{{ default }}` stands for Sounding's rule (sounding/fingerprint.py).

Without a `fingerprint`, the default applies: the rule on the innermost in-app frame
of the raised exception (else its innermost frame), rendered as its platform's
traceback prints it (receiver/sentry/frames.frame_line). So an exception reported by
Python's sentry-sdk and by the Python OpenTelemetry SDK (whose text traceback ends
with the same `File ...` line) lands in one group, and likewise @sentry/node and the
OpenTelemetry JavaScript SDK (`at fn (/abs/file.js:L:C)`). A message event is grouped
by its template (logentry.message when sent: `failed for %s`, not `failed for bob`),
so that its parameters do not split the group.

With a `fingerprint` array of strings: `["{{ default }}"]` alone is exactly the
default; anything else is the SHA-256 (first 32 hex characters) of its parts joined
with a newline, each `{{ default }}` (spaces optional) replaced by the default
fingerprint first. At most MAX_PARTS parts of MAX_PART characters are read; a part
that is not a string is read as Sentry prints it (numbers) or skipped; an array with
no usable part is ignored, as Sentry ignores an empty one.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from receiver.sentry.frames import frame_line, top_frame
from receiver.sentry.values import text
from sounding.fingerprint import frame_fingerprint

MAX_PARTS = 20
MAX_PART = 200
MESSAGE_TYPE = "Message"  # the exception class of an event without an exception

_DEFAULT = re.compile(r"^\{\{\s*default\s*\}\}$")


def default_fingerprint(raised: dict[str, Any] | None, platform: str,
                        template: str) -> str:
    """Sounding's rule for the raised exception, or for the message `template` when
    the event has no exception."""
    if raised is None:
        return frame_fingerprint(MESSAGE_TYPE, "", template)
    top = top_frame(raised["frames"])
    line = "" if top is None else frame_line(top, platform)
    return frame_fingerprint(raised.get("type", ""), line, raised.get("value", ""))


def fingerprint_of(event: dict[str, Any], default: str) -> str:
    """The event's fingerprint (see the module), given its default one."""
    raw = event.get("fingerprint")
    if not isinstance(raw, list):
        return default
    parts = [p for p in (text(item, MAX_PART) for item in raw[:MAX_PARTS]) if p is not None]
    if not parts or (len(parts) == 1 and _DEFAULT.match(parts[0])):
        return default
    parts = [default if _DEFAULT.match(part) else part for part in parts]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]
