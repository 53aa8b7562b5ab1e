"""Which names hold a secret: the one rule, read by the scrubbing processor
(processors/scrub/) for every key of every signal, and by the Sentry door's
bounding (receiver/sentry/bounded.py), so that no two places disagree on what a
secret's name is.

A name is compared lowercased, with `-` read as `_` (so the header
`Proxy-Authorization` and the field `proxy_authorization` are one name). It names a
secret when it is one of EXACT (short names that are too common inside other words
to be matched as parts: `auth` is in `author`, `pwd` in `pwdgen`), or when it
contains one of PARTS (`user_password`, `x-auth-token`, `sessionid`,
`set-cookie`).
"""

from __future__ import annotations

import functools
import re

PARTS = ("password", "passwd", "secret", "token", "api_key", "apikey", "authorization",
         "cookie", "session", "csrf", "credential", "private_key", "privatekey",
         "sentry_key")
EXACT = frozenset({"pwd", "auth", "x_sentry_auth", "sentry_auth", "passphrase"})

_PARTS = re.compile("|".join(re.escape(part) for part in PARTS))
# What every name above holds, in either form (`_` or `-`), as lowercased bytes: a text
# holding none of them names no secret. Looked for with `find` (C, a fast scan each),
# which is far cheaper than a search of an alternation, tried by Python's `re` at every
# character. Not with `in`: Python 3.11's `part in data` on bytes first tries `part` as
# an integer (`65 in data`), raising and clearing a TypeError each time, which costs
# about 1,100 instructions more than `data.find(part)`, more than the scan of a short
# text; this and the scrubbing hints ask it hundreds of times of a Sentry event. Not a
# bare `key`: OpenTelemetry's own names hold it (`messaging.kafka.message.key`).
STEMS = (b"pass", b"pwd", b"secret", b"token", b"_key", b"-key", b"apikey", b"privatekey",
         b"auth", b"cookie", b"session", b"csrf", b"credential")


def may_name_a_secret(lowered: bytes) -> bool:
    """Whether lowercased text (JSON, protobuf bytes) may hold a secret's name."""
    find = lowered.find
    for stem in STEMS:
        if find(stem) >= 0:
            return True
    return False


# A secret given as `name=value` or `name: value` inside text (a query string, a log
# line, a JSON document sent as a string): the value, group 2, is the secret.
# The part of a name a secret's names hold, `_` also matching `-`.
NAME_PARTS = "|".join(re.escape(p).replace("_", "[-_]") for p in PARTS)
ASSIGNMENT = re.compile(
    # From the secret's part of the name on (what comes before it stays as it is): a
    # literal first, so that the search is quick on the many values without one.
    r"((?:" + NAME_PARTS + r")[\w.-]*[\"']?\s*[=:]\s*[\"']?)"
    # Not the scheme of `Authorization: Bearer …` (the credential is the secret, and
    # another rule masks it), nor a value masked already.
    r"(?!(?:bearer|basic)\s)(?!\[Filtered\])([^\s&,;\"'}\]]+)", re.IGNORECASE)


@functools.lru_cache(maxsize=8192)
def is_secret_name(name: str) -> bool:
    """Whether a key, a field or a header named `name` holds a secret (see the module).
    Cached: the same few names come back in every record."""
    folded = name.lower().replace("-", "_")
    return folded in EXACT or _PARTS.search(folded) is not None
