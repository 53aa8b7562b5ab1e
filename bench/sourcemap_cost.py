"""What source maps cost (issue 25): `python -m bench sourcemaps [FUNCTIONS]`.

1. A generated JavaScript app of FUNCTIONS functions (default 40,000: a bundle of
   about 4 MB minified with a 10 MB map, most of it sourcesContent) is minified by
   esbuild, `sentry-cli sourcemaps inject` and `sentry-cli sourcemaps upload` send
   it to a fresh `sounding serve` on SQLite: the upload's wall time and MB/s.
2. Symbolication per event, in this process over the same store: an event of
   FRAMES in-app frames at real positions of the bundle, through the grouping stage
   (processors/grouping.py, which maps first): cold (the map cache emptied before
   each event: one read of the map and a parse) and warm (cached), the minimum of
   several runs; and the same event without maps, for the stage's own cost.
3. The map cache's memory: the process's resident set before and after the map is
   parsed into it, and what the cache counts (the uploaded files' bytes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from model.fingerprint import Grouping
from model.records import Batch, ErrorEvent
from processors.grouping import GroupingProcessor
from tests.dashboard.test_release_api import make_token
from tests.support.jsbuild import BIN
from tests.support.server import start_server
from tests.support.templates import migrated_sqlite

FRAMES = 10


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def generate(folder: Path, functions: int) -> Path:
    src = folder / "src"
    src.mkdir(parents=True)
    lines = []
    for n in range(functions):
        lines.append(f"export function step{n}(value: number): number {{\n"
                     f"  const doubled = value * {n % 7 + 2};\n"
                     f"  if (doubled > {10_000 + n}) {{ throw new Error('step {n} overflow'); }}\n"
                     f"  return {'step' + str(n + 1) if n + 1 < functions else 'Number'}"
                     f"(doubled);\n}}\n")
    (src / "app.ts").write_text("".join(lines))
    out = folder / "dist"
    subprocess.run([str(BIN / "esbuild"), str(src / "app.ts"), "--bundle", "--minify",
                    "--sourcemap", "--format=esm", f"--outfile={out / 'app.js'}"],
                   check=True, capture_output=True)
    return out


def cli(*args: str, base: str, token: str | None) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SENTRY")}
    env.update({"SENTRY_URL": base, "SENTRY_ORG": "sounding", "SENTRY_PROJECT": "acme"})
    if token:
        env["SENTRY_AUTH_TOKEN"] = token
    started = time.perf_counter()
    subprocess.run([str(BIN / "sentry-cli"), *args], env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def event(debug_id: str, positions: list[tuple[int, int]]) -> ErrorEvent:
    frames = [{"abs_path": "http://shop.example/app.js", "filename": "/app.js",
               "function": "t", "lineno": line, "colno": col, "in_app": True}
              for line, col in positions]
    return ErrorEvent(fingerprint="", exception_class="Error", message="step overflow",
                      backtrace=[], ts_us=0, context={"platform": "javascript"},
                      exceptions=[{"type": "Error", "value": "step overflow",
                                   "frames": frames}],
                      grouping=Grouping("Error", "step overflow", ""),
                      debug_ids={"http://shop.example/app.js": debug_id})


def per_event_us(stage: GroupingProcessor, make: object, runs: int, cold: bool) -> float:
    best = float("inf")
    for _ in range(runs):
        batch = Batch(project_id=1)
        batch.errors.append(make())  # type: ignore[operator]
        if cold and stage.source_maps is not None:
            stage.source_maps.source_maps.clear()  # type: ignore[attr-defined]
        started = time.perf_counter()
        stage.process(batch)
        best = min(best, time.perf_counter() - started)
    return best * 1e6


def main(argv: list[str]) -> int:
    functions = int(argv[0]) if argv else 40_000
    folder = Path(tempfile.mkdtemp(prefix="bench-sourcemaps-"))
    dist = generate(folder, functions)
    js, js_map = (dist / "app.js").stat().st_size, (dist / "app.js.map").stat().st_size
    url = migrated_sqlite(folder / "sounding.db")
    server = start_server(url)
    try:
        token = make_token(url, "bench@example.com", "member")
        cli("sourcemaps", "inject", str(dist), base=server.base, token=None)
        upload_s = cli("sourcemaps", "upload", str(dist), base=server.base, token=token)
    finally:
        server.stop()
    from extensions.storage import StorageExtension
    from storage.store import Store

    store = Store(url)
    storage = StorageExtension.over(store)
    debug_id = json.loads((dist / "app.js.map").read_text())["debugId"]
    code = (dist / "app.js").read_text().splitlines()
    # Real positions: the `throw` of FRAMES functions spread over the bundle.
    line = max(range(len(code)), key=lambda i: len(code[i]))
    cols = [i + 1 for i in range(len(code[line])) if code[line].startswith("throw", i)]
    positions = [(line + 1, cols[k * len(cols) // FRAMES]) for k in range(FRAMES)]
    mapped = GroupingProcessor("grouping", {}, storage)
    plain = GroupingProcessor("grouping", {}, None)

    def make() -> ErrorEvent:
        return event(debug_id, positions)

    before = rss_bytes()
    cold = per_event_us(mapped, make, 3, cold=True)
    after = rss_bytes()
    warm = per_event_us(mapped, make, 200, cold=False)
    # The map cached, its positions not yet looked up (a new error in a known build).
    loaded = storage.source_maps._maps  # noqa: SLF001 - the bench looks inside
    fresh = float("inf")
    for _ in range(3):
        for parsed in loaded.values():
            parsed.memo.clear()
        fresh = min(fresh, per_event_us(mapped, make, 1, cold=False))
    bare = per_event_us(plain, make, 200, cold=False)
    check = Batch(project_id=1)
    check.errors.append(make())
    mapped.process(check)
    frames = check.errors[0].exceptions[0]["frames"]  # type: ignore[index]
    resolved = sum("mapped" in f for f in frames)
    mb = (js + js_map) / 1e6
    print(f"bundle: {functions} functions, app.js {js / 1e6:.1f} MB, app.js.map "
          f"{js_map / 1e6:.1f} MB")
    print(f"upload (sentry-cli sourcemaps upload, inject excluded): {upload_s:.2f} s, "
          f"{mb / upload_s:.1f} MB/s")
    print(f"symbolication of an event of {FRAMES} frames ({resolved} mapped), min of runs:")
    print(f"  cold cache (read + parse + map): {cold / 1000:.1f} ms")
    print(f"  map cached, positions new: {fresh / 1000:.1f} ms ({fresh / FRAMES / 1000:.2f} "
          "ms a frame)")
    print(f"  warm (the same error again): {warm:.0f} µs ({warm / FRAMES:.1f} µs a frame)")
    print(f"  grouping without maps: {bare:.0f} µs")
    print(f"map cache: {storage.source_maps.bytes / 1e6:.1f} MB counted; resident set "
          f"+{(after - before) / 1e6:.1f} MB after three cold parses (the allocator's high "
          "water mark included)")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
