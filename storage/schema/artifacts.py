"""Releases and the source map artifacts uploaded for them (migration 0029,
storage/artifacts/): what `sentry-cli` and the bundler plugins send, kept so that
JavaScript frames can be mapped back to the original sources (docs/source-maps.md).

- `releases`: one row per (project, version), made by `sentry-cli releases new` or by
  an upload naming a release; `finalized_us` by `releases finalize`.
- `artifact_chunks`: the pieces the CLI uploads before it asks for a bundle to be
  assembled, by their SHA-1 (the same chunk twice is stored once). They belong to
  no project yet (the CLI names the projects only when it assembles), and are
  deleted once assembled or, if never assembled, by retention.
- `artifact_bundles`: one assembled bundle (a zip with a manifest), by project and
  the SHA-1 of the whole bundle (assembled twice: stored once).
- `artifact_files`: a bundle's files that symbolication reads: each source map
  (zlib-compressed JSON) and each minified file (compressed too: the mapping of
  function names reads its scopes), with the debug id and the URL they were
  uploaded under.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
)

from storage.schema.columns import metadata

releases = Table(
    "releases",
    metadata,
    Column("project_id", Integer, ForeignKey("projects.id"), primary_key=True),
    Column("version", String(200), primary_key=True),
    Column("created_us", BigInteger, nullable=False),
    Column("finalized_us", BigInteger, nullable=True),
)

artifact_chunks = Table(
    "artifact_chunks",
    metadata,
    Column("checksum", String(40), primary_key=True),
    Column("data", LargeBinary, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Index("ix_artifact_chunks_created", "created_us"),
)

artifact_bundles = Table(
    "artifact_bundles",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("checksum", String(40), nullable=False),
    # The bundle's own debug id (its manifest's), when it names one.
    Column("bundle_id", String(36), nullable=True),
    Column("release", String(200), nullable=True),
    Column("dist", String(64), nullable=True),
    Column("size_bytes", BigInteger, nullable=False),
    Column("file_count", Integer, nullable=False),
    Column("created_us", BigInteger, nullable=False),
    Index("ix_artifact_bundles_project_checksum", "project_id", "checksum", unique=True),
    Index("ix_artifact_bundles_release", "project_id", "release"),
)

artifact_files = Table(
    "artifact_files",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("bundle_id", Integer, ForeignKey("artifact_bundles.id"), nullable=False),
    Column("project_id", Integer, nullable=False),
    # "source_map" or "minified_source"
    Column("kind", String(32), nullable=False),
    # As uploaded: `~/assets/index-3f2a.js` (any scheme and host) or an absolute path.
    Column("url", String(2000), nullable=False),
    # Lower-case UUID of the debug id `sentry-cli sourcemaps inject` wrote; NULL
    # for a legacy upload, found by release, dist and URL instead.
    Column("debug_id", String(36), nullable=True),
    # The `sourcemap` header of a minified file: the name of its map in the bundle.
    Column("sourcemap", String(2000), nullable=True),
    Column("release", String(200), nullable=True),
    Column("dist", String(64), nullable=True),
    Column("size_bytes", BigInteger, nullable=False),
    Column("content", LargeBinary, nullable=False),  # zlib
    Index("ix_artifact_files_debug_id", "project_id", "debug_id", "kind"),
    Index("ix_artifact_files_release", "project_id", "release", "kind"),
    Index("ix_artifact_files_bundle", "bundle_id"),
)
