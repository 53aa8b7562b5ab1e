"""Compile Sounding's own .proto files (proto/sounding/v1/*.proto) with grpcio-tools.

    python -m proto.generate            # rewrite the checked-in code (`make proto`)
    python -m proto.generate --out DIR  # write under DIR instead (the staleness test)

The repository root is the import root, so generated modules import each other as
`proto.sounding.v1...` and cannot clash with the `sounding` package itself.
"""

from __future__ import annotations

import argparse
import sys
from importlib.resources import files
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "proto" / "sounding").rglob("*.proto"))


def generate(out: Path) -> list[Path]:
    """Write `*_pb2.py`, `*_pb2.pyi` and `*_pb2_grpc.py` under `out`; return the paths."""
    well_known = str(files("grpc_tools") / "_proto")
    relative = [str(path.relative_to(ROOT)) for path in SOURCES]
    out.mkdir(parents=True, exist_ok=True)
    args = ["grpc_tools.protoc", f"-I{ROOT}", f"-I{well_known}", f"--python_out={out}",
            f"--pyi_out={out}", f"--grpc_python_out={out}", *relative]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed on {', '.join(relative)}")
    written = []
    for source in relative:
        stem = source.removesuffix(".proto")
        written += [out / f"{stem}{suffix}" for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")]
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT, help="output root (default: the repo)")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
