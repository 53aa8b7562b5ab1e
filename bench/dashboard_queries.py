"""The dashboard's queries on a full store (issues 5 and 14): every query the pages
and the read API make, timed on SQLite or PostgreSQL at millions of spans.

    python -m bench dashboard                       # SQLite, 1M spans, a temporary file
    python -m bench dashboard --postgres URL --spans 10000000 --errors 1000000 --reuse
    python -m bench dashboard --sqlite PATH --reuse  # keep the SQLite file for reuse

With `--postgres URL` the data goes into a database named `bench_dash_<spans>` beside
the one in the URL, kept for `--reuse` (loading 10M spans takes many minutes);
`--drop` removes it. The data (bench/dashboard_fill.py) is written through the
real processors and writer, by `--workers` processes. Timings are wall-clock
medians and maxima over repeated calls of the same functions the pages call; the
table replaces the section of bench/RESULTS-dashboard.md for that engine and size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bench import dashboard_cases, dashboard_http
from bench.dashboard_fill import DAYS, SPANS_PER_TRACE, Plan, fill
from model.timeutil import now_us
from storage import keys, schema
from storage.store import Store

RESULTS = Path(__file__).with_name("RESULTS-dashboard.md")


def _time(fn: Callable[[], Any], repeat: int) -> tuple[float, float, float]:
    """(first call, median, maximum) in ms. The first call fills the database's page
    cache and the latency cache (storage/queries/latency_cache.py): what a page costs
    when nobody looked at that range yet."""
    started = time.perf_counter()
    fn()
    first = (time.perf_counter() - started) * 1000
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return first, statistics.median(samples), max(samples)


@contextmanager
def _postgres(url: str, name: str, drop: bool) -> Iterator[tuple[str, dict[str, Any] | None]]:
    """The bench database's URL and what was loaded into it (None: nothing yet)."""
    import psycopg

    admin = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        row = conn.execute("SELECT shobj_description(oid, 'pg_database') FROM pg_database "
                           "WHERE datname = %s", (name,)).fetchone()
        if row is None:
            conn.execute(f'CREATE DATABASE "{name}"')
    meta = json.loads(row[0]) if row and row[0] else None
    try:
        yield f"postgresql+psycopg://{admin.split('://', 1)[1].rsplit('/', 1)[0]}/{name}", meta
    finally:
        if drop:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _remember(url: str, name: str, meta: dict[str, Any]) -> None:
    import psycopg

    admin = url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"COMMENT ON DATABASE \"{name}\" IS '{json.dumps(meta)}'")


def _load(store: Store, args: argparse.Namespace, meta: dict[str, Any] | None
          ) -> dict[str, Any]:
    """Fill the store unless it holds this size already (`--reuse`)."""
    wanted = {"spans": args.spans, "errors": args.errors, "logs": args.logs}
    if args.reuse and meta and {k: meta.get(k) for k in wanted} == wanted:
        store.upgrade()  # a migration added since the load backfills from what is there
        return meta
    if meta:
        raise SystemExit("the bench database holds other data: --drop it first")
    store.upgrade()
    with store.writer.begin() as conn:
        project_id = keys.ensure_project(conn, "bench")
    end = now_us() // 3_600_000_000 * 3_600_000_000 - 1  # just before a whole hour
    plan = Plan(store.url, project_id, args.spans, args.errors, args.logs, end)
    started = time.perf_counter()
    trace_id = fill(plan, args.workers)
    # Statistics now, as a database that has run a while has them: without them
    # PostgreSQL planned the deploys page at 260 ms instead of 45 (autovacuum had not
    # analysed the freshly loaded tables yet).
    with store.writer.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("ANALYZE")
    return {**wanted, "project_id": project_id, "end_us": end, "trace_id": trace_id,
            "fill_s": round(time.perf_counter() - started), "workers": args.workers,
            "date": f"{datetime.now(UTC):%Y-%m-%d}"}


def _table(engine: str, meta: dict[str, Any], rows: list[tuple[str, float, float, float]],
           http: list[Any], repeat: int) -> str:
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    pages = [] if not http else [
        "",
        f"Over HTTP from the real server (bench/dashboard_http.py), the whole page or API "
        f"answer as a client gets it; {repeat} calls after a first one. Load average "
        f"(1, 5, 15 min) at the end of the run: {load}.",
        "",
        *dashboard_http.table(http),
    ]
    return "\n".join([
        f"## {engine}, {meta['spans']:,} spans",
        "",
        f"{meta['date']}, this machine (shared 2-core AMD EPYC, 24 GiB, busy with other "
        f"work), {engine}: {meta['spans']:,} spans ({meta['spans'] // SPANS_PER_TRACE:,} "
        f"traces over {DAYS} days), {meta['errors']:,} error events over 1,000 fingerprints "
        f"and {meta['logs']:,} log records, written through the real processors and writer "
        f"by {meta['workers']} process(es) in {meta['fill_s']} s. Target: under 100 ms each. "
        f"{repeat} calls after a first one (timed apart: cold caches).",
        "",
        "| query | first call ms | median ms | max ms |",
        "|---|---:|---:|---:|",
        *[f"| {name} | {first:.0f} | {median:.1f} | {worst:.1f} |"
          for name, first, median, worst in rows],
        *pages,
        "",
    ])


def _replace_section(table: str) -> None:
    """Put the table in place of the section with the same heading, or before the
    analysis."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Dashboard query benchmark\n\n"
    heading = table.split("\n", 1)[0]
    sections = text.split("\n## ")
    head, rest = sections[0], ["## " + s for s in sections[1:]]
    kept = [s for s in rest if s.split("\n", 1)[0] != heading]
    tables = [s for s in kept if s.split("\n", 1)[0].split(", ")[-1].endswith("spans")]
    others = [s for s in kept if s not in tables]
    parts = [head.rstrip() + "\n", *[t.rstrip() + "\n" for t in tables], table,
             *[o.rstrip() + "\n" for o in others]]
    RESULTS.write_text("\n".join(parts))


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench dashboard")
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--errors", type=int, default=100_000)
    parser.add_argument("--logs", type=int, default=None,
                        help="log records (default: one per 100 spans)")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--postgres", metavar="URL", help="a PostgreSQL database to start from")
    parser.add_argument("--sqlite", metavar="PATH", help="a SQLite file to keep (with --reuse)")
    parser.add_argument("--reuse", action="store_true",
                        help="query the data loaded before, if it is this size")
    parser.add_argument("--drop", action="store_true", help="drop the bench database after")
    parser.add_argument("--only", help="run only the queries whose name holds this text")
    parser.add_argument("--no-http", action="store_true",
                        help="time the query functions only, not the pages over HTTP")
    args = parser.parse_args(argv)
    if args.logs is None:
        args.logs = args.spans // 100
    with tempfile.TemporaryDirectory() as tmp:
        if args.postgres:
            name = f"bench_dash_{args.spans}"
            with _postgres(args.postgres, name, args.drop) as (url, meta):
                store = Store(url)
                loaded = _load(store, args, meta)
                _remember(args.postgres, name, loaded)
                rows = _measure(store, loaded, args)
                http = _http(url, loaded, args)
            engine = "PostgreSQL"
        else:
            path = Path(args.sqlite) if args.sqlite else Path(tmp) / "dashboard.db"
            side = path.with_suffix(".json")
            meta = json.loads(side.read_text()) if args.reuse and side.exists() else None
            if meta is None and path.exists():
                path.unlink()
            store = Store(f"sqlite:///{path}")
            loaded = _load(store, args, meta)
            side.write_text(json.dumps(loaded))
            rows = _measure(store, loaded, args)
            http = _http(f"sqlite:///{path}", loaded, args)
            engine = "SQLite"
    table = _table(engine, loaded, rows, http, args.repeat)
    print(table)
    if not args.only:
        _replace_section(table)
    return 0


def _measure(store: Store, meta: dict[str, Any], args: argparse.Namespace
             ) -> list[tuple[str, float, float, float]]:
    try:
        cases = dashboard_cases.cases(store, meta["project_id"], meta["end_us"],
                                      meta["trace_id"])
        return [(name, *_time(fn, args.repeat)) for name, fn in cases.items()
                if not args.only or args.only in name]
    finally:
        store.dispose()


def _http(url: str, meta: dict[str, Any], args: argparse.Namespace) -> list[Any]:
    """The pages and API calls over HTTP (bench/dashboard_http.py)."""
    if args.no_http:
        return []
    store = Store(url)
    try:
        with store.writer.begin() as conn:
            keys.ensure_project(conn, dashboard_http.EMPTY_PROJECT)
        group = dashboard_cases.busiest_group(store, meta["project_id"])
        with store.reader.connect() as conn:
            record = bytes(conn.execute(select(schema.logs.c.record_key).where(
                schema.logs.c.project_id == meta["project_id"]).limit(1)).scalar_one()).hex()
    finally:
        store.dispose()
    return dashboard_http.measure(url, meta, group, record, args.repeat, args.only)
