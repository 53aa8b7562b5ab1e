"""Uploaded chunks, by their SHA-1: the same chunk sent twice is stored once."""

from __future__ import annotations

import hashlib
import re

from sqlalchemy import delete, select

from storage import schema
from storage.store import Store
from storage.upsert import insert

_C = schema.artifact_chunks
CHECKSUM = re.compile(r"^[0-9a-f]{40}$")


class BadUpload(ValueError):
    """An upload refused as it is (a 400 naming the problem)."""


def check_checksum(value: object, what: str) -> str:
    if not isinstance(value, str) or not CHECKSUM.match(value):
        raise BadUpload(f"{what} must be a SHA-1 checksum (40 lower-case hex digits)")
    return value


def verified(name: str, data: bytes) -> tuple[str, bytes]:
    """(checksum, data) of a chunk whose name must be its SHA-1."""
    check_checksum(name, "a chunk's file name")
    if hashlib.sha1(data).hexdigest() != name:
        raise BadUpload(f"chunk {name}: its SHA-1 is {hashlib.sha1(data).hexdigest()}, "
                        "not its name (corrupt in transit?)")
    return name, data


def save(store: Store, chunks: list[tuple[str, bytes]], now_us: int) -> int:
    """Store the chunks not stored yet; how many were new."""
    if not chunks:
        return 0
    stmt = insert(store.writer.dialect.name, _C)
    with store.writer.begin() as conn:
        known = set(conn.execute(select(_C.c.checksum).where(
            _C.c.checksum.in_([c for c, _ in chunks]))).scalars())
        fresh = {c: d for c, d in chunks if c not in known}
        if fresh:
            conn.execute(stmt.on_conflict_do_nothing(index_elements=["checksum"]), [
                {"checksum": c, "data": d, "created_us": now_us} for c, d in fresh.items()])
    return len(fresh)


def missing(store: Store, checksums: list[str]) -> list[str]:
    with store.reader.connect() as conn:
        known = set(conn.execute(select(_C.c.checksum).where(
            _C.c.checksum.in_(checksums))).scalars())
    return [c for c in checksums if c not in known]


def read(store: Store, checksums: list[str]) -> bytes:
    """The chunks joined in order (each must be stored)."""
    with store.reader.connect() as conn:
        found = dict(conn.execute(select(_C.c.checksum, _C.c.data).where(
            _C.c.checksum.in_(checksums))).all())
    return b"".join(bytes(found[c]) for c in checksums)


def forget(store: Store, checksums: list[str]) -> None:
    with store.writer.begin() as conn:
        conn.execute(delete(_C).where(_C.c.checksum.in_(checksums)))
