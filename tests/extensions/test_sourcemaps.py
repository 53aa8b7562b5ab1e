"""The source map cache (extensions/sourcemaps.py) over a real store on SQLite and
PostgreSQL, with maps uploaded through storage/artifacts/: found by debug id and by
release and URL, what it says when none is found, and its bound in bytes."""

from __future__ import annotations

import hashlib
import io
import json
import time
import zipfile
from collections.abc import Iterator

import pytest

from extensions.sourcemaps import PARSED_PER_BYTE, SourceMapCache, source_path
from storage import keys
from storage.artifacts import assemble, chunks
from storage.store import Store

# `function inner(x){throw new Error(x)}` minified to one line, mapped by hand.
MINIFIED = b"function n(r){throw new Error(r)}\n"
SOURCE = "function inner(x: string) {\n  throw new Error(x);\n}\n"


def source_map(debug_id: str) -> bytes:
    return json.dumps({"version": 3, "sources": ["../src/inner.ts"],
                       "sourcesContent": [SOURCE], "names": ["inner", "x"],
                       "mappings": "AAAA,SAASA,EAAMC,GACb,MAAM,IAAI,MAAMA",
                       "debugId": debug_id}).encode()


def upload(store: Store, project: int, debug_id: str | None, release: str | None) -> None:
    out = io.BytesIO()
    headers = {"debug-id": debug_id} if debug_id else {}
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("manifest.json", json.dumps({"files": {
            "a": {"type": "minified_source", "url": "~/assets/app.js",
                  "headers": {**headers, "sourcemap": "app.js.map"}},
            "b": {"type": "source_map", "url": "~/assets/app.js.map", "headers": headers}}}))
        archive.writestr("a", MINIFIED)
        archive.writestr("b", source_map(debug_id or "00000000-0000-0000-0000-000000000000"))
    data = out.getvalue()
    name = hashlib.sha1(data).hexdigest()
    chunks.save(store, [(name, data)], 0)
    assemble.assemble(store, {project: "web"}, assemble.Request(name, [name], release, None), 0)


@pytest.fixture
def world(db_url: str) -> Iterator[tuple[Store, int]]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "web")
    yield store, project
    store.dispose()


DEBUG_ID = "2f0c5e1a-8b3d-4c6e-9a7f-112233445566"


def test_found_by_debug_id_and_by_release_and_url(world: tuple[Store, int]) -> None:
    store, project = world
    upload(store, project, DEBUG_ID, None)
    upload(store, project, None, "web@1")
    cache = SourceMapCache(store)
    loaded, why = cache.find(project, DEBUG_ID.upper(), None, None, "ignored")
    assert loaded is not None and why == "" and loaded.via == f"debug id {DEBUG_ID}"
    original = loaded.lookup(1, 16)  # the `throw`
    assert original is not None
    assert (original.path, original.lineno, original.function) == ("/src/inner.ts", 2, "inner")
    assert original.context_line == "  throw new Error(x);"
    by_url, _ = cache.find(project, None, "web@1", None, "https://shop.example/assets/app.js")
    assert by_url is not None and by_url.via == "release web@1"


def test_what_is_not_found_says_why(world: tuple[Store, int]) -> None:
    store, project = world
    cache = SourceMapCache(store)
    assert cache.find(project, DEBUG_ID, None, None, "x")[1] == \
        f"no source map was uploaded with debug id {DEBUG_ID}"
    assert "in release web@9" in cache.find(project, None, "web@9", None, "/a.js")[1]
    # Remembered for a while, then looked up again: a map uploaded late is used.
    upload(store, project, DEBUG_ID, None)
    assert cache.find(project, DEBUG_ID, None, None, "x")[0] is None
    cache._misses.clear()  # noqa: SLF001 - as if MISS_TTL_S had passed
    assert cache.find(project, DEBUG_ID, None, None, "x")[0] is not None


def test_the_cache_stays_within_its_bytes(world: tuple[Store, int]) -> None:
    store, project = world
    ids = [f"2f0c5e1a-8b3d-4c6e-9a7f-1122334455{n:02d}" for n in range(5)]
    for debug_id in ids:
        upload(store, project, debug_id, None)
    one = PARSED_PER_BYTE * (len(MINIFIED) + len(source_map(ids[0])))
    cache = SourceMapCache(store, max_bytes=2 * one)
    for debug_id in ids:
        assert cache.find(project, debug_id, None, None, "x")[0] is not None
    assert cache.bytes <= 2 * one and len(cache._maps) == 2  # noqa: SLF001


def test_sources_are_named_from_the_maps_place() -> None:
    assert source_path("~/assets/index.js.map", "../../src/main.ts") == "/src/main.ts"
    assert source_path("https://cdn.example/a/b.js.map", "../src/c.ts") == "/src/c.ts"
    assert source_path("~/a.js.map", "webpack://app/./src/x.ts") == "webpack://app/./src/x.ts"


def test_maps_uploaded_are_parsed_ahead_of_their_first_event(world: tuple[Store, int]) -> None:
    store, project = world
    upload(store, project, "2f0c5e1a-8b3d-4c6e-9a7f-000000000001", None)  # before: not read
    cache = SourceMapCache(store)
    cache.stop_ahead()  # safe before start
    cache.start_ahead(every_s=0.05)
    try:
        time.sleep(0.2)
        upload(store, project, DEBUG_ID, None)
        deadline = time.monotonic() + 10
        while (project, "debug", DEBUG_ID) not in cache._maps:  # noqa: SLF001
            assert time.monotonic() < deadline, "the new map was never parsed ahead"
            time.sleep(0.05)
        assert len(cache._maps) == 1  # noqa: SLF001 - the older upload was left alone
    finally:
        cache.stop_ahead()
        cache.stop_ahead()  # and twice
