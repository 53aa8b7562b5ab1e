"""The uploaded files symbolication and the release page read: a source map (and
its minified file) by debug id, or by release, dist and the URL of the minified file
(legacy uploads, without debug ids), and the artifacts of a release."""

from __future__ import annotations

import posixpath
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlalchemy import and_, func, select

from storage import schema
from storage.store import Store

_B = schema.artifact_bundles
_F = schema.artifact_files


@dataclass(frozen=True)
class MapFiles:
    map_url: str  # the map's URL as uploaded
    minified_url: str | None
    source_map: bytes
    minified: bytes  # b"" when the bundle held no minified file for it


def _inflate(content: bytes) -> bytes:
    return zlib.decompress(bytes(content))


def by_debug_id(store: Store, project_id: int, debug_id: str) -> MapFiles | None:
    """The newest upload of the source map with that debug id, and its minified file."""
    with store.reader.connect() as conn:
        rows = conn.execute(select(_F.c.kind, _F.c.url, _F.c.content).where(
            _F.c.project_id == project_id, _F.c.debug_id == debug_id)
            .order_by(_F.c.id.desc()).limit(4)).all()
    found = {r.kind: r for r in reversed(rows)}
    source_map = found.get("source_map")
    if source_map is None:
        return None
    minified = found.get("minified_source")
    return MapFiles(source_map.url, minified.url if minified else None,
                    _inflate(source_map.content),
                    _inflate(minified.content) if minified else b"")


def url_candidates(abs_path: str) -> list[str]:
    """The URLs a frame's file may have been uploaded under: as it is, and `~/path`
    (any scheme and host), as sentry-cli names them."""
    parts = urlsplit(abs_path)
    path = parts.path if parts.scheme else abs_path
    tilde = "~" + (path if path.startswith("/") else "/" + path)
    return list(dict.fromkeys([abs_path, tilde]))


def by_release(store: Store, project_id: int, release: str, dist: str | None,
               abs_path: str) -> MapFiles | None:
    """A legacy upload's map: the minified file uploaded for that release and dist under
    the frame's URL, and the map its `sourcemap` header names (beside it), else the
    map uploaded as its URL plus `.map`."""
    dist_is = _F.c.dist.is_(None) if dist is None else _F.c.dist == dist
    scope = and_(_F.c.project_id == project_id, _F.c.release == release, dist_is)
    with store.reader.connect() as conn:
        minified = conn.execute(select(_F.c.bundle_id, _F.c.url, _F.c.sourcemap, _F.c.content)
                                .where(scope, _F.c.kind == "minified_source",
                                       _F.c.url.in_(url_candidates(abs_path)))
                                .order_by(_F.c.id.desc()).limit(1)).first()
        if minified is not None:
            base = minified.url
            wanted = [posixpath.join(posixpath.dirname(base), minified.sourcemap)
                      if minified.sourcemap else base + ".map"]
        else:
            wanted = [u + ".map" for u in url_candidates(abs_path)]
        wanted = [posixpath.normpath(w).replace("~:", "~") if w.startswith("~") else w
                  for w in wanted]
        source_map = conn.execute(select(_F.c.url, _F.c.content).where(
            scope, _F.c.kind == "source_map", _F.c.url.in_(wanted))
            .order_by(_F.c.id.desc()).limit(1)).first()
    if source_map is None:
        return None
    return MapFiles(source_map.url, minified.url if minified else None,
                    _inflate(source_map.content),
                    _inflate(minified.content) if minified else b"")


@dataclass(frozen=True)
class Artifact:
    bundle_id: int
    kind: str
    url: str
    debug_id: str | None
    dist: str | None
    size_bytes: int
    uploaded_us: int


def artifacts_of(store: Store, project_id: int, release: str | None, limit: int = 1000
                 ) -> list[Artifact]:
    """The files uploaded for a release (None: without one), newest bundle first."""
    release_is = _B.c.release.is_(None) if release is None else _B.c.release == release
    with store.reader.connect() as conn:
        rows = conn.execute(
            select(_F.c.bundle_id, _F.c.kind, _F.c.url, _F.c.debug_id, _F.c.dist,
                   _F.c.size_bytes, _B.c.created_us)
            .join(_B, _B.c.id == _F.c.bundle_id)
            .where(_B.c.project_id == project_id, release_is)
            .order_by(_B.c.created_us.desc(), _F.c.url).limit(limit)).all()
    return [Artifact(int(r.bundle_id), r.kind, r.url, r.debug_id, r.dist, int(r.size_bytes),
                     int(r.created_us)) for r in rows]


def newest_file_id(store: Store) -> int:
    with store.reader.connect() as conn:
        return int(conn.execute(select(func.coalesce(func.max(_F.c.id), 0))).scalar_one())


def debug_maps_after(store: Store, after_id: int, limit: int = 100
                     ) -> list[tuple[int, int, str]]:
    """(file id, project id, debug id) of the source maps with a debug id uploaded
    after `after_id`, oldest first: what the map cache parses ahead of the first event."""
    with store.reader.connect() as conn:
        rows = conn.execute(select(_F.c.id, _F.c.project_id, _F.c.debug_id).where(
            _F.c.id > after_id, _F.c.kind == "source_map", _F.c.debug_id.is_not(None))
            .order_by(_F.c.id).limit(limit)).all()
    return [(int(r.id), int(r.project_id), str(r.debug_id)) for r in rows]
