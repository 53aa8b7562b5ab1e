"""The generated code under proto/ is what `make proto` writes today: editing a
.proto file without regenerating, or hand-editing generated code, fails here."""

from __future__ import annotations

from pathlib import Path

from proto import generate


def test_checked_in_code_matches_a_fresh_generation(tmp_path: Path) -> None:
    fresh = generate.generate(tmp_path)
    assert fresh, "no .proto file was compiled"
    stale = []
    for path in fresh:
        relative = path.relative_to(tmp_path)
        checked_in = generate.ROOT / relative
        if not checked_in.exists() or checked_in.read_bytes() != path.read_bytes():
            stale.append(str(relative))
    assert not stale, f"stale generated code, run `make proto`: {stale}"


def test_every_proto_file_is_compiled() -> None:
    sources = sorted(p.relative_to(generate.ROOT) for p in (generate.ROOT / "proto").rglob(
        "*.proto"))
    assert sources == [p.relative_to(generate.ROOT) for p in generate.SOURCES]
    for source in sources:
        stem = str(source).removesuffix(".proto")
        assert (generate.ROOT / f"{stem}_pb2.py").is_file()
        assert (generate.ROOT / f"{stem}_pb2_grpc.py").is_file()
