"""Hypothesis strategies for the fuzz suite: valid bodies of every door, structure-aware
mutations of them, the values that broke Sounding before (issue 9), and whole random
bodies and headers.

A JSON body is built as Python values and serialized here, so that it can also hold
what `json.dumps` cannot write: raw tokens (`NaN`, `1e400`, nesting 10,000 deep) and
bytes that are not UTF-8. Such a token is a `Raw` placed anywhere in the tree.
"""

from __future__ import annotations

import gzip
import json
import uuid
import zlib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import brotli
import zstandard
from hypothesis import strategies as st

# --- raw tokens --------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """JSON text written as is. `depth` is its nesting; `refusable` marks a token that
    the decided rules let a door refuse with the whole body (NaN, Infinity, nesting
    deeper than the body limit)."""

    text: bytes
    depth: int = 0
    refusable: bool = False


BODY_MAX_DEPTH = 128  # decided: any JSON body nesting deeper is 400
VALUE_MAX_DEPTH = 16  # decided: params and attribute values nest at most this deep


def nested_raw(depth: int, kind: str = "[") -> Raw:
    close = "]" if kind == "[" else "}"
    opener = "[" if kind == "[" else '{"a":'
    inner = "1" if kind == "[" else "1"
    text = opener * depth + inner + close * depth
    return Raw(text.encode(), depth, depth + 8 > BODY_MAX_DEPTH)


RAW_TOKENS = [
    Raw(b"NaN", refusable=True), Raw(b"Infinity", refusable=True),
    Raw(b"-Infinity", refusable=True), Raw(b"1e400", refusable=True),
    Raw(b"-1e400", refusable=True), Raw(b"1e-400"), Raw(b"-0"), Raw(b"1E22"),
    Raw(b"9223372036854775808"), Raw(b"18446744073709551616"), Raw(b"1" + b"0" * 400),
    # Strings that are not UTF-8: CESU-8 surrogates, overlong forms, stray bytes.
    Raw(b'"E\xed\xa0\x80"'), Raw(b'"\xed\xbf\xbf tail"'), Raw(b'"\xc0\xaf"'),
    Raw(b'"\xff\xfe\xfd"'), Raw(b'"caf\xe9"'), Raw(b'"\xf4\x90\x80\x80"'),
    # Escapes: lone surrogates both ways, NUL.
    Raw(b'"\\ud800"'), Raw(b'"x\\udfff"'), Raw(b'"\\udbff\\udbff"'), Raw(b'"\\u0000"'),
]


def dumps(value: Any) -> bytes:
    """JSON text of `value`, with every Raw written as is."""
    raws: list[bytes] = []

    def hold(obj: Any) -> Any:
        if isinstance(obj, Raw):
            raws.append(obj.text)
            return f"\x00raw{len(raws) - 1}\x00"
        raise TypeError(type(obj).__name__)

    text = json.dumps(value, default=hold, allow_nan=True).encode()
    for index, raw in enumerate(raws):
        text = text.replace(f'"\\u0000raw{index}\\u0000"'.encode(), raw, 1)
    return text


def depth_of(value: Any) -> int:
    if isinstance(value, Raw):
        return value.depth
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


def refusable(value: Any) -> bool:
    """Whether the decided rules allow refusing the whole body for what it holds."""
    if isinstance(value, Raw):
        return value.refusable
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(refusable(v) for v in value.values())
    if isinstance(value, list):
        return any(refusable(v) for v in value)
    return False


# --- odd values ----------------------------------------------------------------------

def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Like st.one_of, with weights; one_of itself leans hard towards its first branch,
    which would leave the later ones (the interesting ones) nearly untried."""
    branches = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(branches).flatmap(lambda strategy: strategy)


def uniform(*strategies: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return weighted(*((1, strategy) for strategy in strategies))


EDGE_INTS = [0, -1, 1, 2**31 - 1, 2**31, -(2**31) - 1, 2**32, 2**53 + 1, 2**63 - 1, 2**63,
             -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 10**22, -(10**30)]
EDGE_FLOATS = [0.5, -0.0, 1e22, 1.7976931348623157e308, 5e-324, 1e300, -1e300,
               float("nan"), float("inf"), float("-inf")]
EDGE_TIMES = [
    "9999-12-31T23:59:59.999999Z", "0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00Z",
    "1969-12-31T23:59:59Z", "1970-01-01T00:00:00Z", "1677-09-21T00:12:43.145224Z",
    "2262-04-11T23:47:16.854775Z", "2262-04-11T23:47:16.854776Z", "2262-04-12",
    "2026-02-30T00:00:00Z", "2026-11-21T24:00:00Z", "2026-11-21T10:00:00-23:59",
    "2026-11-21T10:00:00+24:00", "2026-11-21", "2026-W47", "20261121T100000Z", "",
    "2026-11-21T10:00:00.123456789Z", "now", "１９７０-01-01",
]
EDGE_STRINGS = ["", " ", "\t\n", "\x00", "\x1f\x7f", "\u2028\u2029", "\ufeff", "\ud800",
                "a\udfffb", "😀" * 3, "\u0301", "<script>alert(1)</script>", "%00", "../../x",
                "NaN", "Infinity", "9223372036854775808", "-1", "1e400", "0x10", "null"]


@cache
def long_strings() -> st.SearchStrategy[str]:
    return st.sampled_from([256, 4096, 70_000]).map(lambda n: "x" * n)


@cache
def odd_text() -> st.SearchStrategy[str]:
    # Any code point, lone surrogates too: json.dumps writes them as \ud800 escapes.
    return st.text(weighted((3, st.characters()),
                            (1, st.sampled_from(["\ud800", "\udfff", "\x00", "\u2028"]))),
                   max_size=40)


@cache
def nested_values(max_depth: int) -> st.SearchStrategy[Any]:
    """A value nested exactly `depth` levels, for a depth drawn around the limits."""
    return st.tuples(st.sampled_from([max_depth - 1, max_depth, max_depth + 1, 100, 600]),
                     st.sampled_from(["list", "dict"])).map(lambda t: _nest(*t))


def _nest(depth: int, kind: str) -> Any:
    if depth > 90:  # deeper than json.dumps likes: written raw
        return nested_raw(depth, "[" if kind == "list" else "{")
    value: Any = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


@cache
def odd_scalars() -> st.SearchStrategy[Any]:
    return uniform(
        st.sampled_from(EDGE_INTS), st.sampled_from(EDGE_FLOATS), st.sampled_from(EDGE_TIMES),
        st.sampled_from(EDGE_STRINGS), st.sampled_from(RAW_TOKENS), long_strings(),
        odd_text(), st.integers(), st.floats(), st.booleans(), st.none(),
    )


RAW_STRINGS = [raw for raw in RAW_TOKENS if raw.text.startswith(b'"')]
RAW_NUMBERS = [raw for raw in RAW_TOKENS if not raw.text.startswith(b'"')]


@cache
def _numeric_strings() -> st.SearchStrategy[str]:
    return weighted((3, st.sampled_from([str(i) for i in EDGE_INTS])), (1, odd_strings()))


@cache
def _times() -> st.SearchStrategy[str]:
    return weighted((3, st.sampled_from(EDGE_TIMES)), (1, odd_strings()))


@cache
def odd_strings() -> st.SearchStrategy[Any]:
    """Strings that are still strings, and still look like what they replace."""
    return uniform(st.sampled_from(EDGE_STRINGS), st.sampled_from(EDGE_TIMES),
                   st.sampled_from(RAW_STRINGS), long_strings(), odd_text(),
                   odd_text().map(lambda t: "GET" + t))


def same_kind(value: Any) -> st.SearchStrategy[Any]:
    """An odd value of the kind `value` is: type checks pass, the value rules are tried."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return _numbers(tuple(EDGE_INTS))
    if isinstance(value, float):
        return _numbers(tuple(EDGE_FLOATS))
    if isinstance(value, str) and value.isdigit():  # OTLP/JSON's 64-bit integers
        return _numeric_strings()
    if isinstance(value, str) and value[:2] == "20" and "T" in value:  # a timestamp
        return _times()
    if isinstance(value, str):
        return odd_strings()
    if isinstance(value, list):
        return _odd_lists(bool(value) and isinstance(value[0], str))
    if isinstance(value, dict):
        return _odd_objects()
    return odd_values()


@cache
def _numbers(edges: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    return uniform(st.sampled_from(edges), st.sampled_from(RAW_NUMBERS))


@cache
def _odd_lists(of_strings: bool) -> st.SearchStrategy[Any]:
    return st.lists(odd_strings() if of_strings else odd_values(), max_size=4)


@cache
def _odd_objects() -> st.SearchStrategy[Any]:
    return uniform(st.dictionaries(odd_text(), odd_values(), max_size=4),
                   nested_values(VALUE_MAX_DEPTH).map(lambda v: {"deep": v}))


@cache
def odd_values() -> st.SearchStrategy[Any]:
    """Any value a hostile client might put where another was expected."""
    return weighted(
        (6, odd_scalars()),
        (1, st.lists(odd_scalars(), max_size=3)),
        (1, st.dictionaries(odd_text(), odd_scalars(), max_size=3)),
        (1, nested_values(VALUE_MAX_DEPTH)), (1, nested_values(BODY_MAX_DEPTH)),
        (1, st.sampled_from([[], {}])),
    )


# --- structure-aware mutation -------------------------------------------------------

Path = tuple[Any, ...]


def paths(value: Any, prefix: Path = ()) -> list[Path]:
    """Every place in a JSON tree (not the root)."""
    out: list[Path] = []
    if isinstance(value, dict):
        for key, child in value.items():
            out.append((*prefix, key))
            out.extend(paths(child, (*prefix, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out.append((*prefix, index))
            out.extend(paths(child, (*prefix, index)))
    return out


def _parent(tree: Any, path: Path) -> Any:
    for step in path[:-1]:
        tree = tree[step]
    return tree


@dataclass
class Mutated:
    """A mutated body and where it was changed."""

    body: Any
    changed: list[Path] = field(default_factory=list)

    def __repr__(self) -> str:
        # Hypothesis prints a failing example: keep it readable (SOUNDING_FUZZ_LOG
        # keeps whole bodies).
        text = dumps(self.body)
        shown = text[:3000].decode("utf-8", "backslashreplace")
        return f"Mutated(changed={self.changed!r}, body={shown}{'...' if len(text) > 3000 else ''})"


@st.composite
def mutations(draw: st.DrawFn, base: Any, max_changes: int = 3) -> Mutated:
    """1 to `max_changes` changes to a copy of `base`: a value replaced by an odd one
    (mostly of the same kind, so that type checks pass and value rules are tried), a
    member removed, a member added, a value wrapped deep."""
    body = json.loads(json.dumps(base))
    changed: list[Path] = []
    for _ in range(draw(st.integers(1, max_changes))):
        candidates = paths(body)
        if not candidates:
            break
        path = draw(st.sampled_from(candidates))
        parent = _parent(body, path)
        operation = draw(st.sampled_from(["replace"] * 6 + ["remove", "add", "wrap"]))
        if operation == "remove":
            if isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent[path[-1]] = None
        elif operation == "add" and isinstance(parent, dict):
            parent[draw(odd_text())] = draw(odd_values())
        elif operation == "wrap":
            parent[path[-1]] = _wrap(parent[path[-1]], draw(st.sampled_from([2, 17, 130])))
        elif draw(st.integers(0, 3)):
            parent[path[-1]] = draw(same_kind(parent[path[-1]]))
        else:
            parent[path[-1]] = draw(odd_values())
        changed.append(path)
    return Mutated(body, changed)


def _wrap(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


# --- valid bodies ---------------------------------------------------------------------

def marker() -> str:
    return uuid.uuid4().hex


def valid_error(fingerprint: str | None = None) -> dict[str, Any]:
    return {
        "exception_class": "ZeroDivisionError", "message": "division by zero",
        "backtrace": ["app.py:10 in divide", "app.py:3 in main"],
        "fingerprint": fingerprint or f"fuzz-{marker()}",
        "request_id": "req-1", "user_id": "u-42", "params": {"a": 1, "b": [0, {"c": "d"}]},
        "timestamp": "2026-11-21T10:00:00Z",
        "source_context": {"file": "app.py", "lineno": 10, "context_line": "    return a / b",
                           "pre_context": ["def divide(a, b):"], "post_context": [""]},
        "trace_id": "5b8efff798038103d269b633813fc60c", "span_id": "eee19b7ec3c1b174",
    }


def valid_deploy() -> dict[str, Any]:
    return {"git_sha": "9f1c2ab", "version": "1.4.2", "env": "production", "deployer": "ci",
            "description": "Faster checkout", "service": "shop",
            "timestamp": "2026-11-21T09:00:00Z"}


def valid_request(route: str | None = None) -> dict[str, Any]:
    return {"method": "GET", "route": route or f"/fuzz/{marker()}", "status": 200,
            "duration_ms": 12.5, "timestamp": "2026-11-21T10:00:00Z", "service": "shop",
            "env": "production", "request_id": "req-1",
            "trace_id": "5b8efff798038103d269b633813fc60c"}


def json_span(trace_id: str | None = None, span_id: str = "eee19b7ec3c1b174") -> dict[str, Any]:
    return {
        "traceId": trace_id or marker(), "spanId": span_id, "parentSpanId": "",
        "name": "GET /orders/:id", "kind": 2,
        "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000000120000000",
        "attributes": [
            {"key": "http.request.method", "value": {"stringValue": "GET"}},
            {"key": "http.route", "value": {"stringValue": "/orders/:id"}},
            {"key": "http.response.status_code", "value": {"intValue": "200"}},
            {"key": "a.double", "value": {"doubleValue": 0.25}},
            {"key": "a.list", "value": {"arrayValue": {"values": [{"boolValue": True}]}}},
            {"key": "a.map", "value": {"kvlistValue": {"values": [
                {"key": "k", "value": {"bytesValue": "AAE="}}]}}},
        ],
        "events": [{"name": "exception", "timeUnixNano": "1700000000100000000",
                    "attributes": [{"key": "exception.type",
                                    "value": {"stringValue": "ValueError"}},
                                   {"key": "exception.message",
                                    "value": {"stringValue": "bad"}}]}],
        "status": {"code": 2, "message": "failed"},
    }


def json_traces(*spans: dict[str, Any], service: str = "fuzz") -> dict[str, Any]:
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{"scope": {"name": "fuzz"}, "spans": list(spans)}]}]}


# --- transport: headers and encodings ---------------------------------------------

def encode(body: bytes, encoding: str | None) -> bytes:
    if encoding == "gzip":
        return gzip.compress(body, mtime=0)
    if encoding == "deflate":
        return zlib.compress(body)
    if encoding == "zstd":
        return zstandard.ZstdCompressor().compress(body)
    if encoding == "br":
        return brotli.compress(body)
    return body


CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON",
                 "application/json;charset=latin-1", "application/x-protobuf", "text/plain",
                 "", "multipart/form-data; boundary=x", "*/*",
                 "application/x-protobuf; proto=x"]
ENCODINGS = [None, "gzip", "deflate", "zstd", "identity", "br", "gzip, gzip", "GZIP", "compress",
             "x" * 300]


@st.composite
def transports(draw: st.DrawFn, body: bytes, content_type: str
               ) -> tuple[dict[str, str], bytes]:
    """Headers and the body as sent: the right ones, or odd ones, often mismatched."""
    headers = {"Content-Type": draw(st.sampled_from([content_type, *CONTENT_TYPES]))}
    encoding = draw(st.sampled_from(ENCODINGS))
    if encoding is not None:
        headers["Content-Encoding"] = encoding
    sent_as = draw(st.sampled_from([encoding, encoding, None, "gzip"]))
    data = encode(body, sent_as)
    if draw(st.integers(0, 9)) == 0 and data:  # truncated on the wire
        data = data[:draw(st.integers(0, len(data) - 1))]
    return headers, data


@cache
def random_bodies() -> st.SearchStrategy[bytes]:
    return uniform(
        st.binary(max_size=2048),
        st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.sampled_from([b"", b"null", b"[]", b"{}", b"0", b'"x"', b"[" * 5000,
                         b"[" * 10000 + b"]" * 10000, b'{"a":' * 3000 + b"1" + b"}" * 3000,
                         b"\xef\xbb\xbf{}", b"{\x00}", b'{"errors": [' + b"{}," * 1000 + b"{}]}"]),
    )
