"""Text stack traces parsed into frames and exception chains, one module per
language. Pure and total: any text gives a Trace or None (not a trace we know), never
an exception, since it is read from stored client text when a page is drawn.

Each parser reads the lines it knows and skips the rest; the one that finds the most
frames wins (a tie goes to the earlier in PARSERS), so a trace needs no language tag.
"""

from __future__ import annotations

from collections.abc import Callable

from model.stacktrace import dotnet, go, java, javascript, python, ruby
from model.stacktrace.model import Exception_, Frame, Trace

__all__ = ["Exception_", "Frame", "Trace", "parse"]

PARSERS: tuple[Callable[[str], Trace | None], ...] = (
    python.parse, java.parse, dotnet.parse, go.parse, javascript.parse, ruby.parse)
MAX_TEXT = 200_000  # a longer trace is shown as sent: parsing it would slow the page
# Longer lines are cut before parsing (no frame line is this long), which bounds the
# work of every pattern; the raw text stays whole on the page.
MAX_LINE = 4_000


def parse(text: str) -> Trace | None:
    if not text or len(text) > MAX_TEXT:
        return None
    text = "\n".join(line[:MAX_LINE] for line in text.splitlines())
    best: Trace | None = None
    for parser in PARSERS:
        found = parser(text)
        if found is not None and (best is None or found.frame_count > best.frame_count):
            best = found
    return best
