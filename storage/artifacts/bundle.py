"""An artifact bundle as `sentry-cli sourcemaps upload` builds it, read and checked:
a zip holding `manifest.json` (`files`: path in the zip -> {type, url, headers:
{debug-id, sourcemap}}; `org`, `project`, `release`, `dist`, `debug_id`) and the
files it names. Pure: bytes in, a Bundle out, or BadUpload naming what is wrong."""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass

from storage.artifacts.chunks import BadUpload

# One file, uncompressed: a 10 MB bundle's map is about 30 MB.
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_FILES = 10_000
KINDS = ("source_map", "minified_source")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                   r"[0-9a-fA-F]{12}$")


@dataclass(frozen=True)
class BundleFile:
    kind: str  # one of KINDS
    url: str
    debug_id: str | None
    sourcemap: str | None  # a minified file's `sourcemap` header
    content: bytes


@dataclass(frozen=True)
class Bundle:
    project: str | None  # the project its manifest names, if any
    release: str | None
    dist: str | None
    bundle_id: str | None
    files: list[BundleFile]


def debug_id(value: object) -> str | None:
    """A debug id as stored: a UUID, lower case, with dashes; None for anything else."""
    if not isinstance(value, str) or not _UUID.match(value.strip()):
        return None
    raw = value.strip().replace("-", "").lower()
    return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"


def _text(value: object, limit: int) -> str | None:
    return value[:limit] if isinstance(value, str) and value else None


def check_map(name: str, data: bytes) -> None:
    """A source map must be a JSON object with `mappings` (or an index map's
    `sections`)."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise BadUpload(f"bundle file {name!r} is a source map that is not JSON ({exc})"
                        ) from exc
    if not isinstance(document, dict) or not (
            isinstance(document.get("mappings"), str) or "sections" in document):
        raise BadUpload(f"bundle file {name!r} is a source map without 'mappings'")


def read_bundle(data: bytes) -> Bundle:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = set(archive.namelist())
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise BadUpload(f"the bundle is not a zip archive ({exc})") from exc
    if "manifest.json" not in names:
        raise BadUpload("the bundle has no manifest.json")
    try:
        manifest = json.loads(_member(archive, "manifest.json"))
    except ValueError as exc:
        raise BadUpload(f"the bundle's manifest.json is not JSON ({exc})") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise BadUpload("the bundle's manifest.json has no 'files' object")
    entries = manifest["files"]
    if len(entries) > MAX_FILES:
        raise BadUpload(f"the bundle has {len(entries)} files, more than {MAX_FILES}")
    files = []
    for path, entry in entries.items():
        if not isinstance(entry, dict) or entry.get("type") not in KINDS:
            continue  # other kinds (plain sources, indexes) symbolication does not read
        url = entry.get("url")
        if not isinstance(url, str) or not url:
            raise BadUpload(f"bundle file {path!r} has no 'url' in the manifest")
        if path not in names:
            raise BadUpload(f"the manifest names {path!r}, which the bundle lacks")
        content = _member(archive, path)
        if entry["type"] == "source_map":
            check_map(path, content)
        headers = entry.get("headers")
        headers = {str(k).lower(): v for k, v in headers.items()} \
            if isinstance(headers, dict) else {}
        files.append(BundleFile(entry["type"], url[:2000], debug_id(headers.get("debug-id")),
                                _text(headers.get("sourcemap"), 2000), content))
    return Bundle(_text(manifest.get("project"), 200), _text(manifest.get("release"), 200),
                  _text(manifest.get("dist"), 64), debug_id(manifest.get("debug_id")), files)


def _member(archive: zipfile.ZipFile, name: str) -> bytes:
    """A member's bytes, refused past MAX_FILE_BYTES while inflating (a zip's own sizes
    can lie) and when its CRC does not match."""
    try:
        with archive.open(name) as member:
            content = member.read(MAX_FILE_BYTES + 1)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        raise BadUpload(f"bundle file {name!r} cannot be read: {exc}") from exc
    if len(content) > MAX_FILE_BYTES:
        raise BadUpload(f"bundle file {name!r} is larger than {MAX_FILE_BYTES} bytes")
    return content
