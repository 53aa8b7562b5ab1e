"""`python -m bench` (or `make bench`): collector CPU per record at every door (issue 23).

By default every door (bench/doors.py: OTLP spans, logs and cumulative metrics,
/ingest/errors/batch, /ingest/errors, a Sentry envelope) is driven at saturation over
8 connections for 20 s, each on a fresh `sounding serve` of this source tree and a
fresh database, and the table gives µs of collector CPU (every process of its process
group, from /proc) per record, and records/s. About 3 minutes; `--quick` about 1.5;
`--compare REV` twice as many collectors per round, two rounds: about 13 minutes
(`--quick`: 6).

    python -m bench                                # the six doors
    python -m bench --quick                        # 5 s windows
    python -m bench --only traces_json,sentry_mix  # any scenario of bench/scenarios.py
    python -m bench --compare HEAD~3               # REV and this tree, alternately
    python -m bench --workers 2 --collector-cpus 1 --load-cpus 0
                                                   # serve workers on pinned cores
    python -m bench ingest ...      # issue 4's run: saturation, latency, floor, overload;
                                    # rewrites the generated table of bench/RESULTS.md
    python -m bench dashboard ...   # the dashboard query benchmark (issue 5), when present
    python -m bench wal ...         # the SQLite write-ahead log under sustained load
    python -m bench footprint       # an idle sidecar: time to healthy, memory per process
    python -m bench soak ...        # retention: the SQLite file at steady state
    python -m bench sourcemaps      # source maps: upload MB/s, symbolication µs, cache memory
    python -m bench crons [N] [URL] # the cron checker's turn with N (10,000) monitors
    python -m bench scrub [instructions]  # scrubbing and inbound filters per record (issue 24)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

# Light imports only: the load processes (multiprocessing's spawn) import this module
# again, and each second they spend importing is a second the window waits for them.
from bench import doors
from bench.scenarios import SCENARIOS


def main(argv: list[str]) -> int:
    if argv[:1] == ["dashboard"]:
        if importlib.util.find_spec("bench.dashboard_queries") is None:
            print("bench/dashboard_queries.py is not there yet", file=sys.stderr)
            return 2
        from bench import dashboard_queries

        return int(dashboard_queries.run(argv[1:]) or 0)
    if argv[:1] == ["footprint"]:
        from bench import footprint

        return footprint.main(argv[1:])
    if argv[:1] == ["wal"]:
        from bench import wal

        return wal.main(argv[1:])
    if argv[:1] == ["sourcemaps"]:
        from bench import sourcemap_cost

        return sourcemap_cost.main(argv[1:])
    if argv[:1] == ["soak"]:
        from bench import soak

        return soak.main(argv[1:])
    if argv[:1] == ["crons"]:
        from bench import cron_cost

        return cron_cost.main(argv[1:])
    if argv[:1] == ["scrub"]:
        from bench import scrub_cost

        if argv[1:2] == ["instructions"]:
            scrub_cost.count_instructions()
        else:
            scrub_cost.main(int(argv[1]) if len(argv) > 1 else 7)
        return 0
    if argv[:1] == ["detectors"]:
        from bench import detect_cost

        return detect_cost.main(argv[1:])
    if argv[:1] == ["ingest"]:
        from bench import ingest

        return ingest.main(argv[1:])
    return doors_main(argv)


def doors_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="short windows: 1 s of warm-up, 5 s measured")
    parser.add_argument("--seconds", type=float, metavar="S",
                        help="the measured window of each door (default 20, --quick 5)")
    parser.add_argument("--warmup", type=float, metavar="S",
                        help="load before the window opens (default 2, --quick 1)")
    parser.add_argument("--connections", type=int, default=doors.CONNECTIONS, metavar="N",
                        help=f"connections driving each door (default {doors.CONNECTIONS})")
    parser.add_argument("--only", metavar="NAMES",
                        help=f"comma-separated, out of: {', '.join(SCENARIOS)} "
                             f"(default: {','.join(doors.DOORS)})")
    parser.add_argument("--postgres", metavar="URL",
                        help="PostgreSQL instead of SQLite: an admin URL; a fresh database "
                             "per run, e.g. postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--compare", metavar="REV",
                        help="also run REV's collector (a temporary git worktree), "
                             "alternately with this tree's, and print the ratio")
    parser.add_argument("--rounds", type=int, default=2, metavar="N",
                        help="with --compare: rounds per side, the best kept (default 2)")
    parser.add_argument("--workers", metavar="N",
                        help="service.workers of every collector (default: each tree's "
                             "own default; give it with --compare, whose REV may differ)")
    parser.add_argument("--collector-cpus", metavar="LIST",
                        help="the cores the collector may use, as taskset takes them "
                             "(e.g. 1 or 1-3); its `auto` workers follow")
    parser.add_argument("--load-cpus", metavar="LIST",
                        help="the cores the load generator may use (e.g. 0)")
    args = parser.parse_args(argv)
    collector = doors.Collector({"SOUNDING_WORKERS": args.workers} if args.workers else {},
                                args.collector_cpus)
    if args.load_cpus:
        # This process and the load processes it starts (they inherit it).
        os.sched_setaffinity(0, cpu_list(args.load_cpus))
    names = args.only.split(",") if args.only else list(doors.DOORS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s) {unknown}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    warmup = args.warmup if args.warmup is not None else 1.0 if args.quick else 2.0
    seconds = args.seconds if args.seconds is not None else 5.0 if args.quick else 20.0
    started = time.monotonic()
    load_before = os.getloadavg()
    if args.compare:
        rounds = doors.run_compare(args.compare, names, warmup, seconds, args.connections,
                                   args.postgres, args.rounds, collector)
        text = doors.compare_table(args.compare, rounds)
        ok = all(r.ok for pair in rounds.values() for side in pair for r in side)
    else:
        results = doors.run_doors(names, warmup, seconds, args.connections, args.postgres,
                                  collector)
        text = doors.table(results)
        ok = all(r.ok for r in results)
    from bench.report import machine

    print(f"\n{machine()}; {warmup:.0f} s warm-up, {seconds:.0f} s measured, "
          f"{args.connections} connections per door; service.workers "
          f"{args.workers or 'as each tree sets it'}; collector on cores "
          f"{args.collector_cpus or 'any'}, load on {args.load_cpus or 'any'}; load average "
          f"{' '.join(f'{x:.2f}' for x in load_before)} before, "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} after; "
          f"{time.monotonic() - started:.0f} s in all\n", flush=True)
    print(text, flush=True)
    return 0 if ok else 1


def cpu_list(text: str) -> set[int]:
    """taskset's list form: "0", "1-3", "0,2"."""
    cores: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cores.update(range(int(first), int(last or first) + 1))
    return cores


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
