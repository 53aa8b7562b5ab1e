"""Sentry's envelope framing, parsed: bytes in, the envelope header and its items
out, or InvalidInput naming the item. Pure; what an item's payload means is the
decoders' business (receiver/sentry/event.py, transaction.py).

The format (Sentry's SDK developer documentation, "Envelopes"): a JSON object on
one line (the envelope header), then items, each a JSON object on one line (the
item header, with a `type`) followed by its payload. An item header with `length`
gives the payload's exact size in bytes, and a newline (or the end) follows it; an
item header without `length` makes the payload run to the next newline or the end.
The last newline is optional, and a payload may be empty.

Tolerated, because it cannot change what a payload holds: a `\\r` ending a header
line (JSON reads it as whitespace), `\\r\\n` after a payload of known length, and
blank lines where an item header is expected (a header is never empty). A payload
without `length` is kept exactly as sent, `\\r` included: stripping bytes from it
would be a guess about what it is (JSON reads a trailing `\\r` as whitespace anyway).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from model.errors import InvalidInput
from receiver.jsonbody import parse_json

MAX_ITEMS = 1000
# A header line: an envelope header carries the DSN, the SDK and the trace's dynamic
# sampling context (a few hundred bytes); an item header a type, a length and a few
# names. Far more than either needs, and small enough to refuse garbage early.
MAX_HEADER_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Item:
    headers: dict[str, Any]
    payload: bytes

    @property
    def type(self) -> str:
        return str(self.headers["type"])


@dataclass(frozen=True, slots=True)
class Envelope:
    headers: dict[str, Any]
    items: list[Item]


def parse_envelope(body: bytes) -> Envelope:
    end = _line_end(body, 0)
    headers = _header(body[:end], "header", "the envelope header")
    items: list[Item] = []
    pos = end + 1
    size = len(body)
    while pos < size:
        end = _line_end(body, pos)
        line = body[pos:end]
        if not line.strip():
            pos = end + 1
            continue
        index = len(items)
        field = f"items[{index}]"
        if index >= MAX_ITEMS:
            raise _invalid(field, f"an envelope holds at most {MAX_ITEMS} items")
        item_headers = _header(line, field, "the item header")
        kind = item_headers.get("type")
        if not isinstance(kind, str) or not kind:
            raise _invalid(f"{field}.type", "every item header needs a `type` string")
        start = min(end + 1, size)
        length = item_headers.get("length")
        if length is None:
            end = _line_end(body, start)
            payload, pos = body[start:end], end + 1
        else:
            if isinstance(length, bool) or not isinstance(length, int) or length < 0:
                raise _invalid(f"{field}.length", f"must be an integer >= 0, got {length!r}")
            if start + length > size:
                raise _invalid(f"{field}.length", f"says {length} bytes, but only "
                               f"{max(size - start, 0)} follow the item header")
            payload, pos = body[start:start + length], start + length
            if body.startswith(b"\r\n", pos):
                pos += 2
            elif body.startswith(b"\n", pos):
                pos += 1
            elif pos < size:
                raise _invalid(f"{field}.length", f"the {length} bytes of the payload are "
                               "not followed by a newline: the length is wrong")
        items.append(Item(item_headers, payload))
    return Envelope(headers, items)


def _line_end(body: bytes, start: int) -> int:
    end = body.find(b"\n", start)
    return len(body) if end < 0 else end


def _header(line: bytes, field: str, what: str) -> dict[str, Any]:
    if len(line) > MAX_HEADER_BYTES:
        raise _invalid(field, f"{what} is longer than {MAX_HEADER_BYTES} bytes")
    if not line.strip():
        raise _invalid(field, f"{what} is missing")
    try:
        value = parse_json(line)
    except InvalidInput as exc:
        problem = exc.details[0]["error"] if exc.details else exc.message
        raise _invalid(field, f"{what} is not valid JSON: {problem}") from exc
    if not isinstance(value, dict):
        raise _invalid(field, f"{what} must be a JSON object")
    return value


def _invalid(field: str, problem: str) -> InvalidInput:
    return InvalidInput("the envelope is malformed", [{"field": field, "error": problem}])
