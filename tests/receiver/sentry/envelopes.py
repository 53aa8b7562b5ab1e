"""Writing Sentry envelopes for the tests, in each of the forms SDKs use."""

from __future__ import annotations

import json
from typing import Any

Items = list[tuple[dict[str, Any], bytes]]


def envelope(headers: dict[str, Any], items: Items, *, lengths: bool = True,
             trailing_newline: bool = True, newline: bytes = b"\n") -> bytes:
    """An envelope body; `lengths` False leaves `length` out of the item headers
    (then no payload may hold a newline)."""
    lines = [json.dumps(headers).encode()]
    for item_headers, payload in items:
        item_headers = dict(item_headers)
        if lengths:
            item_headers["length"] = len(payload)
        lines.append(json.dumps(item_headers).encode())
        lines.append(payload)
    body = newline.join(lines)
    return body + newline if trailing_newline else body


def item(kind: str, payload: Any = None, **headers: Any) -> tuple[dict[str, Any], bytes]:
    """One item: a JSON payload (or bytes as they are)."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload or {}).encode()
    return {"type": kind, **headers}, data
