"""A bounded, scrubbed copy of a free-form JSON value from a Sentry event (a
request, a context, a breadcrumb), so that what is kept can always be stored and
shown, and holds no secret.

Sentry SDKs send whatever the application put in: a request body, a context with
a thousand keys, a breadcrumb nested thirty levels deep. Nothing of that is an
error to the SDK, so nothing here refuses: deeper levels, extra items and long
strings are cut, and numbers that JSON cannot carry become None.

Scrubbing, because Sounding must never store a key: the value of every object key
named in SECRET_KEYS (compared lowercased, `-` read as `_`: so the headers
Authorization, Proxy-Authorization, Cookie, Set-Cookie and X-Sentry-Auth, and the
usual password and token fields of a request body) becomes FILTERED, and so does
every `sentry_key=` value inside a string (browser SDKs send the key in the query
string, and a breadcrumb of a request to Sounding itself would carry it).
"""

from __future__ import annotations

import math
import re
from itertools import islice
from typing import Any

MAX_DEPTH = 8  # levels of arrays and objects kept; deeper ones become "[…]"
MAX_ITEMS = 200  # items of one array or object
MAX_STRING = 8_192
FILTERED = "[Filtered]"
DEEPER = "[…]"

SECRET_KEYS = frozenset({
    "authorization", "proxy_authorization", "x_sentry_auth", "cookie", "cookies",
    "set_cookie", "sentry_key", "password", "passwd", "pwd", "secret", "client_secret",
    "api_key", "apikey", "x_api_key", "access_token", "refresh_token", "id_token",
    "auth", "credentials", "private_key", "privatekey", "sessionid", "csrftoken",
    "x_csrftoken", "x_csrf_token"})

_SENTRY_KEY = re.compile(r"(sentry_key=)[^&#\s\"',;]*", re.IGNORECASE)


def scrub(text: str) -> str:
    """`text` with the value of every `sentry_key=` replaced by FILTERED."""
    if "sentry_key" not in text.lower():
        return text
    return _SENTRY_KEY.sub(r"\1" + FILTERED, text)


def secret(key: str) -> bool:
    """Whether an object key names a secret (see the module)."""
    return key.lower().replace("-", "_") in SECRET_KEYS


def plain(value: Any, depth: int = MAX_DEPTH, max_string: int = MAX_STRING,
          max_items: int = MAX_ITEMS) -> Any:
    """A copy of the parsed JSON `value` within the bounds above. Keys are kept as
    strings (cut like values), secrets filtered (an object's
    value by its key, a [name, value] pair's by its name); a value of a type JSON has not
    becomes its type's name, so that no object is ever stored."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return scrub(value[:max_string])
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict | list | tuple):
        if depth <= 0:
            return DEEPER
        if isinstance(value, dict):
            return {scrub(str(k)[:max_string]):
                    FILTERED if secret(str(k)) else plain(v, depth - 1, max_string, max_items)
                    for k, v in islice(value.items(), max_items)}
        if len(value) == 2 and isinstance(value[0], str) and secret(value[0]):
            # A [name, value] pair: Sentry's other form of headers and query strings.
            return [scrub(value[0][:max_string]), FILTERED]
        return [plain(v, depth - 1, max_string, max_items) for v in value[:max_items]]
    return type(value).__name__
