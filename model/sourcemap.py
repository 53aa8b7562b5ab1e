"""What symbolication asks and gets: the contract between the stage that maps
JavaScript frames (processors/symbolicate.py) and whoever holds the uploaded source
maps (extensions/sourcemaps.py, over storage/artifacts/). Pure types, no parser: the
parsing library stays behind the contract."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Original:
    """Where a minified position came from: the original file, 1-based line and
    column, the function (by the scopes of the minified file), and source lines from
    the map's sourcesContent (empty when the map carries none)."""

    path: str
    lineno: int
    colno: int
    function: str | None
    context_line: str | None = None
    pre_context: list[str] = field(default_factory=list)
    post_context: list[str] = field(default_factory=list)


@runtime_checkable
class LoadedMap(Protocol):
    """One parsed source map (with its minified file, when uploaded)."""

    map_url: str  # the map's URL as uploaded (`~/assets/index-3f2a.js.map`)
    via: str  # how it was found: "debug id <id>" or "release <version>"

    def lookup(self, lineno: int, colno: int) -> Original | None: ...


@runtime_checkable
class SourceMaps(Protocol):
    """Finds a frame's map: by debug id when the event names one for the frame's file,
    else by release, dist and the file's URL (legacy uploads). Returns the map, or
    None and why not (said on the page)."""

    def find(self, project_id: int, debug_id: str | None, release: str | None,
             dist: str | None, abs_path: str) -> tuple[LoadedMap | None, str]: ...
