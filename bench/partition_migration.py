"""How long migration 0013 takes to rewrite spans, logs and metric points into day
partitions on PostgreSQL, and back: `python -m bench.partition_migration --spans 1000000`.

A fresh database at revision 0011 is filled with rows spread over the last `--days`
days (made in SQL, as wide as real ones: a span's body of 160 bytes, a log's of 200),
then upgraded to head and downgraded again, each timed; every row is counted after
each step. The database is dropped at the end."""

from __future__ import annotations

import argparse
import os
import time
import uuid

import psycopg
from alembic import command
from alembic.config import Config

from storage.store import MIGRATIONS, Store

ADMIN_DSN = os.environ.get("SOUNDING_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
DAY_NS = 86_400 * 10**9

# $1: rows, $2: newest time (ns), $3: the span of times (ns). Row i is at
# newest - i * span / rows: evenly over the days.
FILL = {
    "spans": """INSERT INTO spans SELECT 1, decode(md5(i::text), 'hex'),
        substr(decode(md5((i + 1)::text), 'hex'), 1, 8), '\\x'::bytea, 'GET /orders/{id}', 2,
        %(newest)s - i * %(step)s, %(newest)s - i * %(step)s + 1000000, 0, '', 'web', 'flask',
        'http', 42, decode(repeat(md5(i::text), 5), 'hex')
        FROM generate_series(1::bigint, %(n)s) i""",
    "logs": """INSERT INTO logs SELECT 1, decode(md5(i::text), 'hex'), %(newest)s - i * %(step)s,
        %(newest)s - i * %(step)s + 5, 9, 'INFO', '\\x'::bytea, '\\x'::bytea, 0, '', 'web',
        'app', 42, 'order ' || i || ' paid', '{"order.id": 1}',
        decode(repeat(md5(i::text), 6) || 'abcdef01', 'hex'), 1
        FROM generate_series(1::bigint, %(n)s) i""",
    "metric_points": """INSERT INTO metric_points SELECT 1,
        decode(md5((i %% 1000)::text), 'hex'), %(newest)s - i * %(step)s, 0, i, 0, NULL, NULL,
        NULL, NULL, 0, 1 FROM generate_series(1::bigint, %(n)s) i""",
}


def _migrate(store: Store, step: object, revision: str) -> float:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    began = time.perf_counter()
    with store.writer.connect() as conn:
        config.attributes["connection"] = conn
        step(config, revision)  # type: ignore[operator]
        conn.commit()
    return time.perf_counter() - began


def _counts(dsn: str) -> dict[str, int]:
    with psycopg.connect(dsn) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
                for t in FILL}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    for table in FILL:
        parser.add_argument(f"--{table.replace('_', '-')}", type=int, default=0, dest=table)
    parser.add_argument("--days", type=int, default=7)
    args = parser.parse_args()
    name = f"sounding_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(ADMIN_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = f"{ADMIN_DSN.rsplit('/', 1)[0]}/{name}"
    store = Store("postgresql+psycopg://" + dsn.split("://", 1)[1])
    try:
        _migrate(store, command.upgrade, "0011")
        newest = time.time_ns()
        with psycopg.connect(dsn) as conn:
            for table, sql in FILL.items():
                n = getattr(args, table)
                if n:
                    conn.execute(sql, {"n": n, "newest": newest,
                                       "step": args.days * DAY_NS // n})
            conn.commit()
            conn.execute("ANALYZE")
        before = _counts(dsn)
        up = _migrate(store, command.upgrade, "head")
        assert _counts(dsn) == before, "rows lost going up"
        down = _migrate(store, command.downgrade, "0011")
        assert _counts(dsn) == before, "rows lost going down"
        rows = ", ".join(f"{n:,} {t}" for t, n in before.items() if n)
        print(f"{rows} over {args.days} days: upgrade {up:.1f} s, downgrade {down:.1f} s")
    finally:
        store.dispose()
        with psycopg.connect(ADMIN_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
