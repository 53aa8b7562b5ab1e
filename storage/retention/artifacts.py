"""Which uploaded source maps retention keeps (docs/source-maps.md): a project's
bundles of its newest `keep_releases` releases (by upload; bundles without a release
count as one release each), and any bundle of a release that still has errors (a
`release` facet of a group retention kept: storage/retention/sweep.py removes groups
whose errors all went, and their facets with them). Chunks never assembled go after
CHUNK_TTL_S. Each bundle goes with its files in one short transaction."""

from __future__ import annotations

from sqlalchemy import delete, select

from storage import schema
from storage.store import Store

_B = schema.artifact_bundles
_F = schema.artifact_files
_C = schema.artifact_chunks
_FACETS = schema.error_group_facets
CHUNK_TTL_S = 86_400
US = 1_000_000


def doomed_bundles(store: Store, project_id: int, keep_releases: int) -> list[int]:
    with store.reader.connect() as conn:
        bundles = conn.execute(select(_B.c.id, _B.c.release).where(
            _B.c.project_id == project_id).order_by(_B.c.created_us.desc(),
                                                    _B.c.id.desc())).all()
        with_errors = set(conn.execute(select(_FACETS.c.value).where(
            _FACETS.c.project_id == project_id, _FACETS.c.facet == "release")).scalars())
    newest: list[object] = []
    doomed = []
    for bundle_id, release in bundles:
        key = release if release is not None else ("bundle", bundle_id)
        if key not in newest and len(newest) < keep_releases:
            newest.append(key)
        if key in newest or release in with_errors:
            continue
        doomed.append(int(bundle_id))
    return doomed


def sweep_artifacts(store: Store, project_id: int, keep_releases: int, now_s: int) -> int:
    """Delete what is not kept; the bundles deleted."""
    doomed = doomed_bundles(store, project_id, keep_releases)
    for bundle_id in doomed:
        with store.writer.begin() as conn:
            conn.execute(delete(_F).where(_F.c.bundle_id == bundle_id))
            conn.execute(delete(_B).where(_B.c.id == bundle_id))
    with store.writer.begin() as conn:
        conn.execute(delete(_C).where(_C.c.created_us < (now_s - CHUNK_TTL_S) * US))
    return len(doomed)
