"""Retention of uploaded source maps (storage/retention/artifacts.py, run by the sweep)
on SQLite and PostgreSQL: the newest releases' bundles stay, older ones go with their
files unless their release still has errors; chunks never assembled go after a day."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import sqlalchemy as sa

from storage import keys, schema
from storage.artifacts import assemble, chunks
from storage.retention import sweep
from storage.store import Store
from tests.storage.retention.test_sweep import KEEP, NOW

US = 1_000_000


def upload(store: Store, project: int, release: str | None, at_s: int) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("manifest.json", json.dumps({"files": {"m": {
            "type": "source_map", "url": f"~/{release}.js.map", "headers": {}}}}))
        archive.writestr("m", json.dumps({"version": 3, "mappings": "", "release": release}))
    data = out.getvalue()
    name = hashlib.sha1(data).hexdigest()
    chunks.save(store, [(name, data)], at_s * US)
    assemble.assemble(store, {project: "shop"}, assemble.Request(name, [name], release, None),
                      at_s * US)


def releases_kept(store: Store) -> list[str | None]:
    with store.reader.connect() as conn:
        return sorted(conn.execute(sa.select(schema.artifact_bundles.c.release)).scalars())


def test_old_releases_maps_go_unless_they_still_have_errors(store: Store) -> None:
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "shop")
        # r1 still has errors: a group's release facet.
        conn.execute(schema.error_group_facets.insert().values(
            project_id=project, fingerprint="f" * 32, facet="release", value="r1",
            count=1, first_seen_us=NOW * US, last_seen_us=NOW * US))
    for n, release in enumerate(["r1", "r2", "r3", "r4"]):
        upload(store, project, release, NOW - 1000 + n)
    chunks.save(store, [(hashlib.sha1(b"stale").hexdigest(), b"stale")], (NOW - 2 * 86400) * US)
    report = sweep.sweep(store, sweep.Policy(KEEP, {}, 5000, artifact_releases=2), "t", NOW)
    assert report.deleted.get("artifact_bundles") == 1  # r2
    assert releases_kept(store) == ["r1", "r3", "r4"]
    with store.reader.connect() as conn:
        files = conn.execute(sa.select(sa.func.count()).select_from(schema.artifact_files)
                             ).scalar_one()
        left = conn.execute(sa.select(sa.func.count()).select_from(schema.artifact_chunks)
                            ).scalar_one()
    assert files == 3 and left == 0
