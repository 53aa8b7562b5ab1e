"""JSON text for the JSON columns, as cheaply as the standard library allows.

`json.dumps` builds a new C encoder on every call; for the millions of small
attribute maps a busy collector writes, building it once saves about a third of
the cost. Same output rules as `json.dumps`, in the compact form, with `allow_nan=False`
and `ensure_ascii=False`.

`dumps_column` is orjson's text where it means the same JSON value, for the large
columns of an error (a Sentry event's context and exception chain: 10 KB of JSON,
encoded in a sixth of the time). Its text may differ from `dumps`' in how a float is
written (`1e-7` for `1e-07`), so anything whose text is hashed (a resource's
attributes, a log record's key) keeps `dumps`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import orjson


def _unsupported(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _make() -> Callable[[Any], str]:
    make_encoder = getattr(json.encoder, "c_make_encoder", None)
    if make_encoder is None:  # an interpreter without the C accelerator
        return lambda value: json.dumps(value, separators=(",", ":"), allow_nan=False,
                                        ensure_ascii=False)
    # allow_nan off (the last argument): NaN and infinities are not JSON, and
    # PostgreSQL refuses them in a json column. Text is written as UTF-8, not as
    # \u escapes, so that a lone surrogate stays visible to storage/wire/storable.py
    # (escaped, PostgreSQL would refuse it too). storage/wire/batch.py drops such a record.
    encode = make_encoder(None, _unsupported, json.encoder.encode_basestring, None,
                          ":", ",", False, False, False)
    join = "".join

    def dumps(value: Any) -> str:
        if isinstance(value, str):  # the C encoder only takes containers at the top
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{value} is not JSON")
        return join(encode(value, 0))
    return dumps


dumps: Callable[[Any], str] = _make()


def dumps_column(value: Any, by_parts: bool = False) -> str:
    """`value`'s JSON text as `dumps` gives it, or an equal one (see the module); raises
    as `dumps` does. orjson refuses what `dumps` may take (a key that is not a string,
    an integer past 64 bits, a lone surrogate, which storage/wire/storable.py then
    refuses) and writes a NaN or an infinity as null: whenever its text holds a null,
    the part of `value` that wrote it must be None, else `dumps` decides.

    `by_parts`: an object is encoded a member at a time and the texts joined (the same
    text), so that a null is looked for in the member that wrote it without encoding
    the others again: for an object of a few large members, a Sentry event's context,
    whose contexts.trace.parent_span_id is null in every event."""
    try:
        if by_parts and type(value) is dict:
            data = _by_parts(value)
        else:
            data = orjson.dumps(value, option=_PASSTHROUGH)
            # `find`, not `in`: on bytes Python 3.11 raises and clears a TypeError first.
            if data.find(b"null") >= 0 and not _nulls_are_none(value, data):
                return dumps(value)
    except (orjson.JSONEncodeError, _Unlike):
        return dumps(value)
    return data.decode()


class _Unlike(Exception):
    """orjson's text would not be `dumps`' value."""


def _by_parts(value: dict[Any, Any]) -> bytes:
    members = []
    for key, member in value.items():
        if type(key) is not str:
            raise _Unlike  # dumps writes 1 as "1"; orjson would write 1
        text = orjson.dumps(member, option=_PASSTHROUGH)
        if text.find(b"null") >= 0 and not _nulls_are_none(member, text):
            raise _Unlike
        members.append(orjson.dumps(key) + b":" + text)
    return b"{" + b",".join(members) + b"}"


def _nulls_are_none(value: Any, data: bytes) -> bool:
    """Whether every null in `data` (orjson's text of `value`) stands for a None. A
    small value is read back and compared; a large one is looked into, its items
    encoded again one by one and only those with a null followed: a Sentry event's
    context has a null in one small part (contexts.trace.parent_span_id), and reading
    back all of it would cost five times its encoding."""
    kind = type(value)
    if len(data) > _READ_BACK and (kind is dict or kind is list):
        return all(_nulls_are_none(item, text)
                   for item in (value.values() if kind is dict else value)
                   if (text := orjson.dumps(item, option=_PASSTHROUGH)).find(b"null") >= 0)
    return bool(orjson.loads(data) == value)


_READ_BACK = 256  # bytes of JSON past which a value's items are looked into


# What `dumps` refuses, orjson must not write either: a dataclass, a datetime, a
# subclass of a JSON type (which `dumps` writes by its own rules).
_PASSTHROUGH = (orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
                | orjson.OPT_PASSTHROUGH_SUBCLASS)
