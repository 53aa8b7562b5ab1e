"""A bounded, scrubbed copy of a free-form JSON value from a Sentry event (a
request, a context, a breadcrumb), so that what is kept can always be stored and
shown, and holds no secret.

Sentry SDKs send whatever the application put in: a request body, a context with
a thousand keys, a breadcrumb nested thirty levels deep. Nothing of that is an
error to the SDK, so nothing here refuses: deeper levels, extra items and long
strings are cut, and numbers that JSON cannot carry become None.

Scrubbing, because Sounding must never store a key: the value of every object key
that names a secret by model/secretnames.py's rule (the headers Authorization,
Proxy-Authorization, Cookie, Set-Cookie and X-Sentry-Auth, and the usual password
and token fields of a request body) becomes FILTERED, and so does every
`sentry_key=` value inside a string (browser SDKs send the key in the query string,
and a breadcrumb of a request to Sounding itself would carry it). This is done here,
at the door, as well as by the scrubbing stage (processors/scrub/), which then
finds these values filtered already: a Sentry event's context is cut to its bounds
here anyway, and a secret cut in half by the bound could no longer be recognised.
"""

from __future__ import annotations

import functools
import json
import math
import re
from itertools import islice
from typing import Any

import orjson

from model.secretnames import is_secret_name, may_name_a_secret
from receiver.jsonbody import depth_of

MAX_DEPTH = 8  # levels of arrays and objects kept; deeper ones become "[…]"
MAX_ITEMS = 200  # items of one array or object
MAX_STRING = 8_192
FILTERED = "[Filtered]"
DEEPER = "[…]"

_SENTRY_KEY = re.compile(r"(sentry_key=)[^&#\s\"',;]*", re.IGNORECASE)


# Items of a list checked at once by plain_items: few enough that their JSON is
# usually within MAX_STRING.
_ITEMS_AT_ONCE = 16


def scrub(text: str) -> str:
    """`text` with the value of every `sentry_key=` replaced by FILTERED."""
    if _SENTRY_KEY.search(text) is None:
        return text
    return _SENTRY_KEY.sub(r"\1" + FILTERED, text)


def secret(key: str) -> bool:
    """Whether an object key names a secret: model/secretnames.py, the one rule."""
    return is_secret_name(key)


@functools.lru_cache(maxsize=4096)
def _key(key: str, max_string: int) -> tuple[str, bool]:
    """An object key as kept, and whether its value is a secret: the same few keys
    come back in every event, so each is read once."""
    return scrub(key[:max_string]), secret(key)


def json_size(value: Any) -> int:
    """Bytes of `value` as UTF-8 JSON (encoded in C; Python's encoder for what the C
    one refuses, an integer past 64 bits say)."""
    try:
        return len(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        return len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def kept_as_sent(value: Any, max_depth: int = MAX_DEPTH) -> bool:
    """Whether an object or array can be kept as it came, without a copy: at most
    MAX_STRING bytes of JSON (so no string or array in it can be past its bound),
    nesting at most `max_depth` levels, holding only finite numbers and nothing that
    may be a secret. Most contexts, requests and breadcrumbs are; checked in C but
    for the depth of the few with many brackets."""
    try:
        data = orjson.dumps(value)
    except (TypeError, RecursionError, orjson.JSONEncodeError):
        return False  # an integer past 64 bits: the copy decides
    # orjson writes an infinite number (a body may hold 1e400) as null: where a null
    # shows, the value must read back as itself (null is None, not an infinity).
    # `find`, not `in` (model/secretnames.py says why).
    if data.find(b"null") >= 0 and orjson.loads(data) != value:
        return False
    if len(data) > MAX_STRING:
        return False
    lowered = data.lower()
    # A name that may be a secret's (model/secretnames.py), or a sentry_key anywhere,
    # only means the value is copied the slow way, which decides exactly.
    if lowered.find(b"sentry_key") >= 0 or may_name_a_secret(lowered):
        return False
    opening = len(data) - len(data.translate(None, b"[{"))
    return opening <= max_depth or depth_of(value, max_depth) <= max_depth


def plain(value: Any, depth: int = MAX_DEPTH, max_string: int = MAX_STRING,
          max_items: int = MAX_ITEMS) -> Any:
    """The parsed JSON `value` within the bounds above: as it is when it can be
    (`kept_as_sent`), else a copy. Keys are kept as strings (cut like values),
    secrets filtered (an object's value by its key, a [name, value] pair's by its
    name); a value of a type JSON has not becomes its type's name, so that no object
    is ever stored."""
    kind = type(value)
    if (kind is dict or kind is list) and depth == MAX_DEPTH and max_string == MAX_STRING \
            and max_items == MAX_ITEMS and kept_as_sent(value):
        return value
    return _copy(value, depth, max_string, max_items)


def plain_items(items: list[Any]) -> list[Any]:
    """[plain(item) for item in items] (a list's items bounded as values of their
    own, as breadcrumbs are), checked _ITEMS_AT_ONCE at a time: a run of items that
    can be kept as sent together can be kept each alone."""
    kept: list[Any] = []
    for start in range(0, len(items), _ITEMS_AT_ONCE):
        run = items[start:start + _ITEMS_AT_ONCE]
        # One level deeper than each item: the list itself.
        if kept_as_sent(run, MAX_DEPTH + 1):
            kept += run
        else:
            kept += [plain(item) for item in run]
    return kept


def _copy(value: Any, depth: int, max_string: int, max_items: int) -> Any:
    # By exact type, the commonest first: this runs for every value of a large event.
    kind = type(value)
    if kind is str:
        return scrub(value[:max_string] if len(value) > max_string else value)
    if value is None or kind is bool or kind is int:
        return value
    if kind is dict:
        if depth <= 0:
            return DEEPER
        copy = {}
        for k, v in islice(value.items(), max_items) if len(value) > max_items \
                else value.items():
            name, hidden = _key(k if type(k) is str else str(k), max_string)
            copy[name] = FILTERED if hidden else _copy(v, depth - 1, max_string, max_items)
        return copy
    if kind is list or kind is tuple:
        if depth <= 0:
            return DEEPER
        if len(value) == 2 and type(value[0]) is str and secret(value[0]):
            # A [name, value] pair: Sentry's other form of headers and query strings.
            return [scrub(value[0][:max_string]), FILTERED]
        return [_copy(v, depth - 1, max_string, max_items) for v in value[:max_items]]
    if kind is float:
        return value if math.isfinite(value) else None
    return type(value).__name__
