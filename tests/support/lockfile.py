"""Reading a lock of requirements/ (uv's compiled requirements with hashes): what the
lock test checks and what `make test-clients` reports as the locked version."""

from __future__ import annotations

import re
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

# `name==version` at the start of a line, its markers after `;`, its hashes on the
# lines that follow.
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s;\\]+)"
                  r"\s*(?:;\s*([^\\]+?))?\s*\\?$")


def locked(path: Path) -> dict[str, tuple[Version, str | None, list[str], bool]]:
    """name -> (version, markers, hashes, asked for by pyproject.toml) of a lock."""
    pins: dict[str, tuple[Version, str | None, list[str], bool]] = {}
    name = None
    for line in path.read_text().splitlines():
        found = _PIN.match(line)
        if found:
            name = canonicalize_name(found[1])
            pins[name] = (Version(found[3]), found[4], [], False)
            continue
        stripped = line.strip()
        if name is None:
            continue
        version, markers, hashes, direct = pins[name]
        if stripped.startswith("--hash=sha256:"):
            hashes.append(stripped.split(":", 1)[1].rstrip(" \\"))
        elif "sounding (pyproject.toml)" in stripped:
            pins[name] = (version, markers, hashes, True)
    return pins
