"""Reading a request body with a bound on its decompressed size, and a budget for
the bytes held by every body being read at once.

The limit is enforced while streaming: a small body that inflates past it is
refused as soon as the inflated bytes pass the limit, without ever holding the
inflated whole. Inflating goes in bounded pieces (`PIECE`), and the async
`feed_async` / `finish_async` let the event loop serve others between them: a
4.9 KB gzip body that inflates to 5 MB no longer holds the loop for the whole
5 MB (40 of them at once held /health for 651 ms).

The budget (`BodyBudget`) counts what every reader of one receiver holds, raw or
inflated, until the request is answered: 40 connections each inflating 5 MB and
withholding the last byte grew the collector by 141 MiB; past the budget the body
being read is refused with Overloaded (503 + Retry-After) as soon as it passes.
"""

from __future__ import annotations

import asyncio
import io
import zlib
from collections.abc import Iterator

import brotli
import zstandard

from model.errors import InvalidInput, Overloaded, PayloadTooLarge, UnsupportedMediaType
from runtime import telemetry
from runtime.queuebound import QueueBound

ENCODINGS = ("identity", "gzip", "x-gzip", "deflate", "zstd", "br")
PIECE = 64 * 1024  # inflated bytes produced between two turns of the event loop


class BodyBudget:
    """Bytes held by the bodies of one receiver's requests, read or inflated so far."""

    def __init__(self, max_bytes: int, retry_after: int = 1, name: str = "") -> None:
        self.retry_after = retry_after
        # An idle budget takes one body whatever its size (runtime/queuebound.py), so
        # that a budget set below the body limit does not refuse a large body forever.
        self.held = QueueBound(None, max_bytes)
        self._gauge = telemetry.BODY_BYTES.labels(name) if name else None
        self._gauge_soon = telemetry.once_per_turn(self._set_gauge)

    def fits(self, size: int) -> bool:
        return self.held.takes(0, size)

    def take(self, size: int) -> None:
        if not self.fits(size):
            raise Overloaded("the collector is receiving too many request bodies at once",
                             self.retry_after)
        self.held.add(0, size)
        if self._gauge is not None:
            self._gauge_soon()

    def give_back(self, size: int) -> None:
        self.held.remove(0, size)
        if self._gauge is not None:
            self._gauge_soon()

    def _set_gauge(self) -> None:
        assert self._gauge is not None
        self._gauge.set(self.held.bytes)


class BodyReader:
    def __init__(self, limit: int, encoding: str | None,
                 budget: BodyBudget | None = None) -> None:
        self.limit = limit
        self.encoding = (encoding or "identity").strip().lower()
        if self.encoding not in ENCODINGS:
            raise UnsupportedMediaType(
                f"Content-Encoding {self.encoding!r} is not supported; use gzip, deflate, zstd, "
                "br or none")
        self.budget = budget or BodyBudget(1 << 62)
        self._held = 0  # bytes this reader took from the budget
        self._parts: list[bytes] = []
        self._size = 0  # decompressed bytes so far
        self._raw = 0
        self._zlib: zlib._Decompress | None = None
        self._brotli: brotli.Decompressor | None = None
        self._released = False  # the request was answered or its client went away

    def _too_large(self) -> PayloadTooLarge:
        return PayloadTooLarge(f"the request body exceeds the limit of {self.limit} bytes"
                               + ("" if self.encoding == "identity" else " after decompression"))

    def _take(self, size: int) -> None:
        self.budget.take(size)
        self._held += size

    def release(self) -> None:
        """Give back what this body held; safe twice. Call once the request is answered."""
        self.budget.give_back(self._held)
        self._held = 0
        self._parts = []
        self._released = True

    def _append(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self.limit:
            raise self._too_large()
        self._take(len(data))
        self._parts.append(data)

    # Driving: sync for callers that can block, async for the event loop.

    def feed(self, chunk: bytes) -> None:
        for _ in self.feed_steps(chunk):
            pass

    async def feed_async(self, chunk: bytes) -> None:
        for _ in self.feed_steps(chunk):
            await asyncio.sleep(0)
            if self._released:  # answered meanwhile: nothing more to hold
                return

    def finish(self) -> bytes:
        for _ in self.finish_steps():
            pass
        return self._body()

    async def finish_async(self) -> bytes:
        for _ in self.finish_steps():
            await asyncio.sleep(0)
            if self._released:
                return b""
        return self._body()

    # The work, yielding between bounded pieces.

    def feed_steps(self, chunk: bytes) -> Iterator[None]:
        self._raw += len(chunk)
        if self._raw > self.limit:
            raise self._too_large()
        if self.encoding == "identity" or self.encoding == "zstd":
            # zstd is inflated at the end through a bounded reader (see finish_steps).
            self._take(len(chunk))
            self._parts.append(chunk)
            self._size = self._raw
            return
        if self.encoding == "br":
            yield from self._inflate_brotli(chunk)
            return
        yield from self._inflate(chunk)

    def _inflate(self, chunk: bytes) -> Iterator[None]:
        data = chunk
        while data:
            if self._zlib is None:
                self._zlib = zlib.decompressobj(self._wbits(data))
            room = self.limit - self._size
            try:
                out = self._zlib.decompress(data, min(room + 1, PIECE))
            except zlib.error as exc:
                raise _invalid(f"the body is not valid {self.encoding} data: {exc}") from exc
            self._append(out)
            data = self._zlib.unconsumed_tail
            if self._zlib.eof:
                # gzip allows several members one after another.
                data = self._zlib.unused_data + data
                self._zlib = None
            if data:
                yield

    def _inflate_brotli(self, chunk: bytes) -> Iterator[None]:
        # Brotli (1.2 on) bounds each call's output with `output_buffer_limit`, a soft
        # bound: a call may return up to about one and a half times it. The rest of
        # the input waits inside the decompressor, and calls with no input drain it
        # until one returns nothing: then it needs more input, or the stream is done.
        if self._brotli is None:
            self._brotli = brotli.Decompressor()
        data = chunk
        while True:
            room = self.limit - self._size
            try:
                out = self._brotli.process(data, output_buffer_limit=min(room + 1, PIECE))
            except brotli.error as exc:
                raise _invalid(f"the body is not valid br data: {exc}") from exc
            data = b""
            if not out:
                return
            self._append(out)
            yield

    def _wbits(self, data: bytes) -> int:
        if self.encoding in ("gzip", "x-gzip"):
            return 16 + zlib.MAX_WBITS
        # "deflate" is zlib-wrapped by the HTTP specification, but some clients send
        # raw deflate; the zlib header is recognisable by its checksum.
        if len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0:
            return zlib.MAX_WBITS
        return -zlib.MAX_WBITS

    def finish_steps(self) -> Iterator[None]:
        if self.encoding == "zstd":
            compressed, raw_held = b"".join(self._parts), self._held
            self._parts, self._size = [], 0
            try:
                reader = zstandard.ZstdDecompressor().stream_reader(
                    io.BytesIO(compressed), read_across_frames=True)
                while self._size <= self.limit:
                    piece = reader.read(min(PIECE, self.limit + 1 - self._size))
                    if not piece:
                        break
                    self._append(piece)
                    yield
            except zstandard.ZstdError as exc:
                raise _invalid(f"the body is not valid zstd data: {exc}") from exc
            # The compressed bytes are gone; what they held goes back.
            self.budget.give_back(raw_held)
            self._held -= raw_held
            return
        if self._brotli is not None and not self._brotli.is_finished():
            raise _invalid("the br body is truncated")
        if self._zlib is not None and not self._zlib.eof and self._raw:
            raise _invalid(f"the {self.encoding} body is truncated")

    def _body(self) -> bytes:
        # The parts and their join live together for a moment; the budget counts one.
        body = b"".join(self._parts)
        self._parts = [body]
        return body


def _invalid(message: str) -> InvalidInput:
    return InvalidInput(message, [{"field": "body", "error": message}])
