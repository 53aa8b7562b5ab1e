"""The uploaded source maps, found and parsed for symbolication (model/sourcemap.py's
contract; processors/symbolicate.py asks), with a cache of parsed maps bounded in
bytes. The storage extension holds one (`StorageExtension.find`).

Parsing is `symbolic`'s SourceMapCache (Sentry's own library, Rust): it reads the
minified file's scopes for the original function names (a frame's own name in
minified code is `n`), gives source lines from sourcesContent, and parses a 13 MB
map in 1.5 s where the `sourcemap` package takes 10 s without either (bench/
sourcemap_cost.py). Its lookup walks the minified line, about a millisecond on a
4 MB line: each map remembers the positions it looked up.

Finding: by debug id, else by release, dist and URL (storage/artifacts/lookup.py).
What was not found is remembered for MISS_TTL_S only, so that a map uploaded after the
first events is used from then on. Reads are synchronous (the grouping stage is):
one indexed row per map, once per map while it stays cached.

Parsing a large map takes a second or more, which the first event of a new build
would wait for on the event loop. So a thread (`start_ahead`) looks every
AHEAD_EVERY_S for maps uploaded with a debug id since it last looked and parses them
ahead of their first event; symbolic releases the GIL while it parses (the event
loop was held at most 7 ms during a 0.6 s parse, measured).
"""

from __future__ import annotations

import logging
import posixpath
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from model.sourcemap import LoadedMap, Original
from storage.artifacts import lookup
from storage.store import Store

if TYPE_CHECKING:
    from symbolic.sourcemapcache import SourceMapCache as _Parsed

log = logging.getLogger(__name__)
MISS_TTL_S = 30.0
AHEAD_EVERY_S = 2.0
CONTEXT_LINES = 5
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
MEMO_POSITIONS = 4096
# symbolic's parsed form holds about twice the bytes it was parsed from (bench/:
# 37 MB for a 17 MB map and minified file); the cache counts that.
PARSED_PER_BYTE = 2


def source_path(map_url: str, source: str) -> str:
    """A map's `sources` entry as a path a reader knows: relative ones (esbuild's and
    Vite's `../src/main.ts`) resolved against the map's own URL path, never above its
    root (`/src/main.ts`); a URL (`webpack://app/./src/x.ts`) as it is."""
    if "://" in source:
        return source
    base = urlsplit(map_url.removeprefix("~")).path if "://" in map_url else \
        map_url.removeprefix("~")
    return posixpath.normpath(posixpath.join(posixpath.dirname("/" + base.lstrip("/")),
                                             source))


@dataclass
class Loaded:
    """One parsed map (model.sourcemap.LoadedMap)."""

    map_url: str
    via: str
    parsed: _Parsed  # symbolic's
    size: int
    # Positions looked up already: an error repeats, and symbolic's lookup walks the
    # minified line to its column (about a millisecond on a 4 MB line, bench/).
    memo: dict[tuple[int, int], Original | None] = field(default_factory=dict)

    def lookup(self, lineno: int, colno: int) -> Original | None:
        key = (lineno, colno)
        if key in self.memo:
            return self.memo[key]
        found = self._lookup(lineno, colno)
        if len(self.memo) >= MEMO_POSITIONS:
            self.memo.clear()
        self.memo[key] = found
        return found

    def _lookup(self, lineno: int, colno: int) -> Original | None:
        token = self.parsed.lookup(lineno, colno, CONTEXT_LINES)
        if token is None or not token.src:
            return None
        return Original(
            path=source_path(self.map_url, token.src), lineno=int(token.line), colno=int(token.col),
            function=token.function_name or token.name,
            context_line=None if token.context_line is None else token.context_line.rstrip("\n"),
            pre_context=[line.rstrip("\n") for line in token.pre_context],
            post_context=[line.rstrip("\n") for line in token.post_context])


def parse(files: lookup.MapFiles, via: str) -> Loaded:
    # Imported at the first map: a collector that never sees one does not load it
    # (3 MB resident, 20 ms).
    from symbolic.sourcemapcache import SourceMapCache as Parsed

    parsed = Parsed.from_bytes(files.minified, files.source_map)
    size = PARSED_PER_BYTE * (len(files.source_map) + len(files.minified))
    return Loaded(files.map_url, via, parsed, size)


class SourceMapCache:
    """model.sourcemap.SourceMaps over a store: parsed maps, least recently used
    dropped past `max_bytes`."""

    def __init__(self, store: Store, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.store = store
        self.max_bytes = max_bytes
        self.bytes = 0
        self._maps: OrderedDict[tuple[object, ...], Loaded] = OrderedDict()
        self._misses: dict[tuple[object, ...], tuple[float, str]] = {}
        self._lock = threading.Lock()  # the dashboard reads it from threads too
        self._ahead: threading.Thread | None = None
        self._stop = threading.Event()

    def start_ahead(self, every_s: float = AHEAD_EVERY_S) -> None:
        """Parse newly uploaded maps in a thread, ahead of their first event."""
        if self._ahead is not None:
            return
        self._stop.clear()
        self._ahead = threading.Thread(target=self._parse_ahead, args=(every_s,),
                                       name="source-maps-ahead", daemon=True)
        self._ahead.start()

    def stop_ahead(self) -> None:
        """Safe without start_ahead, and twice."""
        thread, self._ahead = self._ahead, None
        self._stop.set()
        if thread is not None:
            thread.join(10)

    def _parse_ahead(self, every_s: float) -> None:
        try:
            seen = lookup.newest_file_id(self.store)
        except Exception:  # noqa: BLE001 - a store down now: events load maps as they come
            log.warning("source maps: cannot read the store; no maps parsed ahead")
            return
        while not self._stop.wait(every_s):
            try:
                for file_id, project_id, debug_id in lookup.debug_maps_after(self.store, seen):
                    seen = file_id
                    if self._stop.is_set():
                        return
                    self.find(project_id, debug_id, None, None, "")
            except Exception:  # noqa: BLE001 - retried at the next turn
                log.debug("source maps: parsing ahead failed", exc_info=True)

    def find(self, project_id: int, debug_id: str | None, release: str | None,
             dist: str | None, abs_path: str) -> tuple[LoadedMap | None, str]:
        if debug_id is not None:
            debug_id = debug_id.strip().lower()
            key: tuple[object, ...] = (project_id, "debug", debug_id)
        elif release is not None:
            key = (project_id, "release", release, dist, abs_path)
        else:
            return None, "the event names no debug id for this file and no release"
        with self._lock:
            found = self._maps.get(key)
            if found is not None:
                self._maps.move_to_end(key)
                return found, ""
            missed = self._misses.get(key)
            if missed is not None and time.monotonic() - missed[0] < MISS_TTL_S:
                return None, missed[1]
        loaded, why = self._load(key, project_id, debug_id, release, dist, abs_path)
        with self._lock:
            if loaded is None:
                if len(self._misses) > 10_000:
                    self._misses.clear()
                self._misses[key] = (time.monotonic(), why)
                return None, why
            if key not in self._maps:
                self._maps[key] = loaded
                self.bytes += loaded.size
                while self.bytes > self.max_bytes and len(self._maps) > 1:
                    _, dropped = self._maps.popitem(last=False)
                    self.bytes -= dropped.size
        return loaded, ""

    def _load(self, key: tuple[object, ...], project_id: int, debug_id: str | None,
              release: str | None, dist: str | None, abs_path: str
              ) -> tuple[Loaded | None, str]:
        if debug_id is not None:
            files = lookup.by_debug_id(self.store, project_id, debug_id)
            if files is None:
                return None, f"no source map was uploaded with debug id {debug_id}"
            via = f"debug id {debug_id}"
        else:
            assert release is not None
            files = lookup.by_release(self.store, project_id, release, dist, abs_path)
            if files is None:
                return None, (f"no source map was uploaded for {abs_path} in release "
                              f"{release}" + (f", dist {dist}" if dist else ""))
            via = f"release {release}" + (f", dist {dist}" if dist else "")
        try:
            return parse(files, via), ""
        except Exception as exc:  # symbolic's errors have no common base  # noqa: BLE001
            return None, f"the source map {files.map_url} cannot be read: {exc}"

    def clear(self) -> None:
        with self._lock:
            self._maps.clear()
            self._misses.clear()
            self.bytes = 0
