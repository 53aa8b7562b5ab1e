"""receiver/http/body.py: reading a request body with a bound on its decompressed size,
without ever holding more than the bound."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from collections.abc import Callable

import brotli
import pytest
import zstandard

from model.errors import InvalidInput, PayloadTooLarge, UnsupportedMediaType
from receiver.http.body import BodyReader
from tests.receiver.otlp_helpers import deflate_raw

LIMIT = 1024 * 1024
DATA = b"span payload " * 5000


PACKERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress, "deflate": zlib.compress, "zstd": zstandard.compress,
    "br": brotli.compress,
}


def read(encoding: str | None, body: bytes, chunk: int = 4096, limit: int = LIMIT) -> bytes:
    reader = BodyReader(limit, encoding)
    for start in range(0, len(body), chunk):
        reader.feed(body[start:start + chunk])
    return reader.finish()


@pytest.mark.parametrize(("encoding", "pack"), [
    (None, lambda d: d), ("identity", lambda d: d), ("gzip", gzip.compress),
    ("GZIP", gzip.compress), ("x-gzip", gzip.compress), ("deflate", zlib.compress),
    ("deflate", deflate_raw), ("zstd", zstandard.compress), ("br", brotli.compress),
    ("BR", lambda d: brotli.compress(d, quality=11)),
])
def test_each_encoding_round_trips(encoding: str | None, pack: Callable[[bytes], bytes]) -> None:
    assert read(encoding, pack(DATA)) == DATA


def test_gzip_members_one_after_another_are_all_read() -> None:
    assert read("gzip", gzip.compress(b"first ") + gzip.compress(b"second")) == b"first second"


def test_a_body_exactly_at_the_limit_is_read() -> None:
    body = b"x" * LIMIT
    assert read("gzip", gzip.compress(body)) == body


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "zstd", "br"])
def test_a_bomb_is_refused_without_inflating_it(encoding: str) -> None:
    """64 MiB of zeros in a few dozen KiB: refused, and memory stays near the limit."""
    bomb = PACKERS[encoding](b"\x00" * (64 * LIMIT))
    assert len(bomb) < LIMIT // 4
    tracemalloc.start()
    try:
        with pytest.raises(PayloadTooLarge, match="after decompression"):
            read(encoding, bomb, chunk=65536)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * LIMIT, f"held {peak} bytes while refusing"


def test_raw_bytes_past_the_limit_are_refused_before_inflating() -> None:
    with pytest.raises(PayloadTooLarge):
        read(None, b"x" * (LIMIT + 1))


@pytest.mark.parametrize(("encoding", "body"), [
    ("gzip", b"definitely not gzip"),
    ("gzip", gzip.compress(DATA)[:-40]),
    ("deflate", b"\x78\x9c\xff\xff\xff"),
    ("zstd", b"not zstd either"),
    ("br", b"not brotli at all"),
    ("br", brotli.compress(DATA)[:-4]),
    ("br", brotli.compress(DATA) + b"trailing"),
])
def test_broken_streams_are_invalid_input(encoding: str, body: bytes) -> None:
    with pytest.raises(InvalidInput):
        read(encoding, body)


@pytest.mark.parametrize("encoding", ["compress", "gzip, br"])
def test_other_encodings_are_unsupported(encoding: str) -> None:
    with pytest.raises(UnsupportedMediaType):
        BodyReader(LIMIT, encoding)


def test_brotli_is_inflated_in_bounded_pieces_whatever_the_chunks() -> None:
    """A body a byte at a time or whole: the same bytes, none held past the limit."""
    body = brotli.compress(DATA)
    assert read("br", body, chunk=1) == DATA
    assert read("br", body, chunk=len(body)) == DATA
    with pytest.raises(PayloadTooLarge):
        read("br", body, limit=len(DATA) - 1)
