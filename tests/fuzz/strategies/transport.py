"""What a body travels in: headers and encodings, right or odd and often mismatched,
and whole random bodies."""

from __future__ import annotations

import gzip
import zlib
from functools import cache

import brotli
import zstandard
from hypothesis import strategies as st

from tests.fuzz.strategies.odd import uniform


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
