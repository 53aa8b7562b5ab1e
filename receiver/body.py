"""Reading a request body with a bound on its decompressed size.

The limit is enforced while streaming: a small body that inflates past it is
refused as soon as the inflated bytes pass the limit, without ever holding the
inflated whole.
"""

from __future__ import annotations

import io
import zlib

import zstandard

from sounding.errors import InvalidInput, PayloadTooLarge, UnsupportedMediaType

ENCODINGS = ("identity", "gzip", "x-gzip", "deflate", "zstd")


class BodyReader:
    def __init__(self, limit: int, encoding: str | None) -> None:
        self.limit = limit
        self.encoding = (encoding or "identity").strip().lower()
        if self.encoding not in ENCODINGS:
            raise UnsupportedMediaType(
                f"Content-Encoding {self.encoding!r} is not supported; use gzip, deflate, zstd "
                "or none")
        self._parts: list[bytes] = []
        self._size = 0  # decompressed bytes so far
        self._raw = 0
        self._zlib: zlib._Decompress | None = None
        self._first = True

    def _too_large(self) -> PayloadTooLarge:
        return PayloadTooLarge(f"the request body exceeds the limit of {self.limit} bytes"
                               + ("" if self.encoding == "identity" else " after decompression"))

    def _append(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self.limit:
            raise self._too_large()
        self._parts.append(data)

    def feed(self, chunk: bytes) -> None:
        self._raw += len(chunk)
        if self._raw > self.limit:
            raise self._too_large()
        if self.encoding == "identity" or self.encoding == "zstd":
            # zstd is inflated at the end through a bounded reader (see finish).
            self._parts.append(chunk)
            self._size = self._raw
            return
        self._inflate(chunk)

    def _inflate(self, chunk: bytes) -> None:
        data = chunk
        while data:
            if self._zlib is None:
                self._zlib = zlib.decompressobj(self._wbits(data))
            room = self.limit - self._size
            try:
                out = self._zlib.decompress(data, room + 1)
            except zlib.error as exc:
                raise _invalid(f"the body is not valid {self.encoding} data: {exc}") from exc
            self._append(out)
            data = self._zlib.unconsumed_tail
            if self._zlib.eof:
                # gzip allows several members one after another.
                data = self._zlib.unused_data + data
                self._zlib = None

    def _wbits(self, data: bytes) -> int:
        if self.encoding in ("gzip", "x-gzip"):
            return 16 + zlib.MAX_WBITS
        # "deflate" is zlib-wrapped by the HTTP specification, but some clients send
        # raw deflate; the zlib header is recognisable by its checksum.
        if len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0:
            return zlib.MAX_WBITS
        return -zlib.MAX_WBITS

    def finish(self) -> bytes:
        if self.encoding == "zstd":
            compressed = b"".join(self._parts)
            try:
                reader = zstandard.ZstdDecompressor().stream_reader(
                    io.BytesIO(compressed), read_across_frames=True)
                out = bytearray()
                while len(out) <= self.limit:
                    piece = reader.read(min(1 << 16, self.limit + 1 - len(out)))
                    if not piece:
                        break
                    out += piece
            except zstandard.ZstdError as exc:
                raise _invalid(f"the body is not valid zstd data: {exc}") from exc
            if len(out) > self.limit:
                raise self._too_large()
            return bytes(out)
        if self._zlib is not None and not self._zlib.eof and self._raw:
            raise _invalid(f"the {self.encoding} body is truncated")
        return b"".join(self._parts)


def _invalid(message: str) -> InvalidInput:
    return InvalidInput(message, [{"field": "body", "error": message}])
