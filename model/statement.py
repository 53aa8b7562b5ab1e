"""Statement normalisation: one database statement as the shape it has whatever its
values, so that every run of "the same query" is one operation (the operations and
the service map, storage/writer/operations.py) and, later, one N+1 finding.

`normalize(sql)`:
- literals become `?`: quoted strings ('it''s', E'..', N'..', X'..', $$..$$ and
  $tag$..$tag$), numbers (1, -2.5, 1e10, .5), hexadecimal (0xFF), the booleans
  TRUE and FALSE, and NULL as a value (`VALUES (1, NULL)`), but not in `IS NULL` and
  `IS NOT NULL`, which are other queries than `= ?`;
- every driver's parameter mark becomes `?` too (`?`, `?1`, `$1`, `%s`,
  `%(name)s`, `:name`), so SQLAlchemy on psycopg, psycopg alone and sqlite3 give one
  shape for one query;
- a cast on a value (`?::INTEGER`, which SQLAlchemy and psycopg add to what they
  bind) goes with the value;
- a parenthesised list of nothing but `?` becomes `(?)`: `IN (1, 2, 3)` and
  `IN (?, ?)` are one query whatever the list's length; repeated rows of a VALUES
  list become one row (`VALUES (?, ?), (?, ?)` is `VALUES (?, ?)`);
- comments (`-- ...`, `/* ... */`) go, runs of white space become one space, none
  inside parentheses or before a comma. Identifiers ("quoted" or not) and keywords
  are kept as written: the case an ORM writes is the case it always writes.

Pure and cheap: one regular expression pass over the text, then two over the much
shorter result. Callers that see the same statements again (a parametrised query is
the same text every time) keep `Normalizer`, which remembers the last few thousand.
"""

from __future__ import annotations

import re

PLACEHOLDER = "?"
# At most this many characters of a statement are read: a multi-megabyte statement
# (a bulk insert of literals) is one operation by its first part.
MAX_INPUT = 16_384

# Only what changes is matched (words and spaces are left to `str.split`): a call
# back per token would cost more than the rest together. Quoted identifiers are
# matched to be kept as they are, so that nothing inside them is taken for a value.
_TOKENS = re.compile(
    r"""
      (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
    | (?P<dollar>\$(?P<tag>[A-Za-z_]\w*)?\$.*?(?:\$(?P=tag)?\$|\Z))
    | (?P<string>(?<![\w$])[EeNnXxBbUu]?'(?:[^'\\]|''|\\.)*(?:'|\Z))
    | (?P<ident>"(?:[^"]|"")*"|`[^`]*`|\[[^\]\s]*\])
    | (?P<param>%\([^)]*\)s|%s|\$\d+|\?\d*|(?<![:\w]):[A-Za-z_]\w*)
    | (?P<isnull>\bIS\s+(?:NOT\s+)?NULL\b)
    | (?P<word>\b(?:TRUE|FALSE|NULL)\b)
    | (?P<number>(?<![\w$.])-?(?:0[xX][0-9A-Fa-f]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\w$]))
    """,
    re.VERBOSE | re.DOTALL | re.IGNORECASE,
)
# `?::INTEGER`, `?::int2[]`: a cast a driver adds to a value it binds (SQLAlchemy on
# psycopg, psycopg's client-side binding), part of the value, not of the query.
_CAST = re.compile(r"\?(?:::[A-Za-z_]\w*(?:\(\d+(?:, ?\d+)?\))?(?:\[\])*)+")
# `(?, ?, ?)`: a list of placeholders only.
_LIST = re.compile(r"\(\?(?:, \?)+\)")
# `VALUES (row), (row), ...`: the same row repeated.
_ROWS = re.compile(r"(\((?:[^()]|\([^()]*\))*\))(?:, \1)+")
# Spaces a statement's writer chose, not its meaning.
_COMMA = re.compile(r" ?, ?")
_OPEN = re.compile(r"\( ")
_CLOSE = re.compile(r" \)")


def _token(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "ident":
        return match.group()
    if kind == "comment":
        return " "
    if kind == "isnull":
        return " ".join(match.group().split())
    return PLACEHOLDER  # string, dollar, param, word (TRUE, FALSE, NULL), number


def normalize(sql: str) -> str:
    """The statement with literals and parameter marks as `?`, lists collapsed,
    comments and spacing normalised (see the module's docstring)."""
    text = _TOKENS.sub(_token, sql[:MAX_INPUT])
    text = " ".join(text.split())
    text = _CLOSE.sub(")", _OPEN.sub("(", _COMMA.sub(", ", text)))
    text = _CAST.sub(PLACEHOLDER, text)
    text = _LIST.sub("(?)", text)
    return _ROWS.sub(r"\1", text).strip()


class Normalizer:
    """`normalize` with the last `size` statements remembered: parametrised statements
    repeat verbatim, and a dictionary look-up costs a fiftieth of the regular
    expressions. Bounded, so a stream of statements with literals inlined (every one
    different) costs memory for `size` of them, no more."""

    __slots__ = ("_seen", "_size")

    def __init__(self, size: int = 4096) -> None:
        self._seen: dict[str, str] = {}
        self._size = size

    def __call__(self, sql: str) -> str:
        found = self._seen.get(sql)
        if found is None:
            found = normalize(sql)
            if len(self._seen) >= self._size:
                self._seen.clear()  # cheaper than LRU upkeep; refills in one pass
            self._seen[sql] = found
        return found
