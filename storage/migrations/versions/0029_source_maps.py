"""Releases and uploaded source map artifacts (storage/schema/artifacts.py says what
each table holds): `sentry-cli` and the bundler plugins upload chunks, assemble them
into bundles, and create releases; symbolication reads the files.

Revision ID: 0029
Revises: 0026
"""

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "releases",
        sa.Column("project_id", sa.Integer(), sa.ForeignKey("projects.id"), primary_key=True),
        sa.Column("version", sa.String(200), primary_key=True),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
        sa.Column("finalized_us", sa.BigInteger(), nullable=True),
    )
    op.create_table(
        "artifact_chunks",
        sa.Column("checksum", sa.String(40), primary_key=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_artifact_chunks_created", "artifact_chunks", ["created_us"])
    op.create_table(
        "artifact_bundles",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("project_id", sa.Integer(), sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("checksum", sa.String(40), nullable=False),
        sa.Column("bundle_id", sa.String(36), nullable=True),
        sa.Column("release", sa.String(200), nullable=True),
        sa.Column("dist", sa.String(64), nullable=True),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("file_count", sa.Integer(), nullable=False),
        sa.Column("created_us", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_artifact_bundles_project_checksum", "artifact_bundles",
                    ["project_id", "checksum"], unique=True)
    op.create_index("ix_artifact_bundles_release", "artifact_bundles",
                    ["project_id", "release"])
    op.create_table(
        "artifact_files",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("bundle_id", sa.Integer(), sa.ForeignKey("artifact_bundles.id"),
                  nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("debug_id", sa.String(36), nullable=True),
        sa.Column("sourcemap", sa.String(2000), nullable=True),
        sa.Column("release", sa.String(200), nullable=True),
        sa.Column("dist", sa.String(64), nullable=True),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
    )
    op.create_index("ix_artifact_files_debug_id", "artifact_files",
                    ["project_id", "debug_id", "kind"])
    op.create_index("ix_artifact_files_release", "artifact_files",
                    ["project_id", "release", "kind"])
    op.create_index("ix_artifact_files_bundle", "artifact_files", ["bundle_id"])


def downgrade() -> None:
    op.drop_table("artifact_files")
    op.drop_table("artifact_bundles")
    op.drop_table("artifact_chunks")
    op.drop_table("releases")
