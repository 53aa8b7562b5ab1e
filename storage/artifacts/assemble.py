"""A bundle assembled from its chunks and stored for its projects, in one
transaction: stored whole or not at all; assembled twice, stored once."""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass

from sqlalchemy import func, select

from storage import schema
from storage.artifacts import chunks, releases
from storage.artifacts.bundle import Bundle, read_bundle
from storage.artifacts.chunks import BadUpload
from storage.store import Store

_B = schema.artifact_bundles
_F = schema.artifact_files
# What one project may keep, uncompressed, across its bundles (retention removes the
# bundles of old releases, storage/retention/artifacts.py).
MAX_PROJECT_BYTES = 1024 * 1024 * 1024
# Most bytes a bundle may have, and what chunk-upload tells the CLI.
MAX_BUNDLE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Request:
    checksum: str
    chunks: list[str]
    release: str | None
    dist: str | None


@dataclass(frozen=True)
class Outcome:
    state: str  # "ok" (was there), "created", "not_found" (chunks missing)
    missing: list[str]


def assembled(store: Store, project_ids: list[int], checksum: str) -> bool:
    with store.reader.connect() as conn:
        found = conn.execute(select(func.count()).select_from(_B).where(
            _B.c.checksum == checksum, _B.c.project_id.in_(project_ids))).scalar_one()
    return int(found) == len(set(project_ids))


def assemble(store: Store, projects: dict[int, str], request: Request, now_us: int
             ) -> Outcome:
    """Assemble `request` for each project (id -> name). BadUpload names what is
    wrong with the bundle."""
    ids = list(projects)
    if assembled(store, ids, request.checksum):
        return Outcome("ok", [])
    missing = chunks.missing(store, list(dict.fromkeys(request.chunks)))
    if missing:
        return Outcome("not_found", missing)
    data = chunks.read(store, request.chunks)
    if len(data) > MAX_BUNDLE_BYTES:
        raise BadUpload(f"the bundle is larger than {MAX_BUNDLE_BYTES} bytes")
    if hashlib.sha1(data).hexdigest() != request.checksum:
        raise BadUpload(f"the chunks do not add up to the bundle's checksum "
                        f"{request.checksum}")
    bundle = read_bundle(data)
    if bundle.project is not None and bundle.project not in projects.values():
        raise BadUpload(f"the bundle's manifest claims project {bundle.project!r}, which "
                        f"this upload is not for ({', '.join(sorted(projects.values()))})")
    release = request.release or bundle.release
    dist = request.dist or bundle.dist
    size = sum(len(f.content) for f in bundle.files)
    with store.writer.begin() as conn:
        for project_id in ids:
            if conn.execute(select(_B.c.id).where(
                    _B.c.project_id == project_id, _B.c.checksum == request.checksum)).first():
                continue
            kept = conn.execute(select(func.coalesce(func.sum(_B.c.size_bytes), 0)).where(
                _B.c.project_id == project_id)).scalar_one()
            if int(kept) + size > MAX_PROJECT_BYTES:
                raise BadUpload(
                    f"project {projects[project_id]!r} keeps {int(kept)} bytes of artifacts; "
                    f"this bundle's {size} would pass its limit of {MAX_PROJECT_BYTES}")
            _store(conn, project_id, request.checksum, bundle, release, dist, size, now_us)
            if release is not None:
                releases.ensure(conn, project_id, release, now_us)
    chunks.forget(store, list(dict.fromkeys(request.chunks)))
    return Outcome("created", [])


def _store(conn: object, project_id: int, checksum: str, bundle: Bundle, release: str | None,
           dist: str | None, size: int, now_us: int) -> None:
    bundle_row = conn.execute(_B.insert().values(  # type: ignore[attr-defined]
        project_id=project_id, checksum=checksum, bundle_id=bundle.bundle_id, release=release,
        dist=dist, size_bytes=size, file_count=len(bundle.files), created_us=now_us
    ).returning(_B.c.id)).scalar_one()
    if bundle.files:
        conn.execute(_F.insert(), [  # type: ignore[attr-defined]
            {"bundle_id": bundle_row, "project_id": project_id, "kind": f.kind, "url": f.url,
             "debug_id": f.debug_id, "sourcemap": f.sourcemap, "release": release,
             "dist": dist, "size_bytes": len(f.content),
             "content": zlib.compress(f.content, 6)}
            for f in bundle.files])
