"""Collector CPU per record at every door (issue 23): what `python -m bench` runs.

Each door gets a fresh `sounding serve` and a fresh database, and is driven at
saturation by two load processes over 8 keep-alive connections in all (closed loop:
each connection sends its next request when the last is answered). Over the
measured window the CPU time of every process of the collector's process group
(serve, its writer, its decode workers) is read from /proc, and divided by the
records acknowledged meanwhile: µs of collector CPU per record. It depends less than
records/s (also given) on how much of the machine the collector gets, but not nothing:
bench/RESULTS.md ("Issue 23") shows how far it moved on a busy machine. The doors and
their shapes (bench/scenarios.py, bench/payloads*.py):

- OTLP/HTTP protobuf spans, 512 per request;
- OTLP/HTTP protobuf logs, 512 per request;
- OTLP/HTTP protobuf metrics, cumulative, 200 points per request (40 histogram series,
  80 sums, 80 gauges), each series growing from one export to the next as an SDK's;
- /ingest/errors/batch, 100 errors per request;
- /ingest/errors, one error per request;
- a Sentry envelope of one ~10 KB error event (10 frames with source context,
  breadcrumbs, contexts, request), shaped as sentry-sdk sends it.

With `--postgres URL` each run gets a fresh PostgreSQL database instead of a SQLite file;
the database server's CPU is then not the collector's (it shows as other load).

`--compare REV` checks REV out into a temporary git worktree and runs every door on
REV's collector and on this tree's, alternately (REV, this, REV, this, ...), with this
tree's load generator and payloads for both. Each side keeps its best round (the
lowest CPU per record: what other tenants of the machine add is never negative),
and the table gives the ratio this/REV: below 1 is less CPU per record than REV.
Each collector runs from its own tree with that tree's entry points
(bench/server.py, `tree_path`) and on a fresh database, which REV's own migrations
create; the run prints the commit and the source each tree's `import sounding` finds,
and a collector whose working directory is not its tree is refused.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import run
from bench.scenarios import SCENARIOS
from bench.server import REPO, BenchServer, database, tree_path

DOORS = ("traces_proto", "logs_proto", "metrics_proto", "errors_batch", "errors_single",
         "sentry_event")
CONNECTIONS = 8
# The packages the collector imports, byte-compiled in each tree before it runs: where
# PYTHONDONTWRITEBYTECODE is set, every process would compile them again as it starts.
PACKAGES = ("sounding", "receiver", "processors", "exporters", "storage", "dashboard",
            "model", "runtime", "extensions", "proto")


@dataclass
class DoorResult:
    name: str
    label: str
    unit: str
    records_per_s: float = 0.0
    cpu_us_per_record: float = float("nan")
    collector_cores: float = 0.0
    other_cores: float = 0.0  # CPU the rest of the machine used (other tenants)
    acked: int = 0
    stored: int | None = None  # None: the count could not be read (an older schema)
    statuses: dict[int, int] = field(default_factory=dict)
    exit_code: int | None = None
    failed: str = ""

    @property
    def ok(self) -> bool:
        return (not self.failed and self.exit_code == 0 and self.acked > 0
                and self.stored in (None, self.acked))


@dataclass(frozen=True)
class Collector:
    """How each collector is started: `env` on top of the bench's own (for example
    SOUNDING_WORKERS), and `cpus` the cores it may run on (taskset's list), all when
    None."""
    env: dict[str, str] = field(default_factory=dict)
    cpus: str | None = None


def measure(name: str, tree: Path, db_url: str, warmup: float, seconds: float,
            connections: int = CONNECTIONS, collector: Collector = Collector()) -> DoorResult:
    """One door on the collector of source tree `tree`, on a fresh database `db_url`."""
    scenario = SCENARIOS[name]
    result = DoorResult(name, scenario.label, scenario.unit)
    try:
        server = BenchServer(db_url, collector.env, tree=tree, cpus=collector.cpus)
    except Exception as exc:  # noqa: BLE001 - one broken row must not lose the others
        result.failed = f"did not start: {str(exc).strip().splitlines()[-1][:200]}"
        return result
    try:
        if server.cwd != tree.resolve():
            raise RuntimeError(f"the collector runs in {server.cwd}, not in {tree}")
        sat = _saturate(name, server, warmup, seconds, connections)
        result.records_per_s = sat["window_acked_records"] / seconds
        result.acked = sat["acked_records"]
        result.statuses = dict(sat["statuses"])
        usage = sat["usage"]
        if usage is not None and result.records_per_s:
            result.collector_cores = usage.server_cores
            result.cpu_us_per_record = usage.server_cores / result.records_per_s * 1e6
            result.other_cores = max(0.0, usage.machine_cores - usage.server_cores
                                     - sat["load_cores"])
    except Exception as exc:  # noqa: BLE001
        result.failed = f"failed: {str(exc).strip().splitlines()[-1][:200]}"
    finally:
        result.exit_code = server.stop()
    with contextlib.suppress(Exception):
        result.stored = server.count(scenario.stored_sql)
    if result.ok and "Traceback" not in server.log():
        server.cleanup()
    else:
        result.failed = result.failed or f"see {server.log_path}"
    return result


def _saturate(name: str, server: BenchServer, warmup: float, seconds: float,
              connections: int) -> dict[str, Any]:
    """The load phase, again with a longer lead while a load process was not ready
    before the window opened (a window without all its load counts for nothing). Bodies
    are made as they are sent, not before: a few hundred µs each, while the collector
    spends milliseconds on each, and the window opens sooner on a busy machine."""
    lead, acked = 4.0, 0
    for _ in range(3):
        sat = run._phase(SCENARIOS[name], server, warmup, seconds, connections=connections,
                         lead=lead)
        acked += sat["acked_records"]
        sat["acked_records"] = acked  # what every attempt sent was stored
        if sat["late"] < warmup:
            return sat
        print(f"  (a load process was ready {sat['late']:.1f} s late: again, "
              f"{2 * lead + sat['late']:.0f} s ahead)", flush=True)
        lead = 2 * lead + sat["late"]
    raise RuntimeError(f"the load processes were not ready in time ({sat['late']:.1f} s late)")


def describe(r: DoorResult) -> str:
    if r.failed and not r.records_per_s:
        return f"  {r.name}: {r.failed}"
    stored = "?" if r.stored is None else f"{r.stored:,}"
    return (f"  {r.name}: {r.cpu_us_per_record:.1f} µs collector CPU/{r.unit[:-1]}, "
            f"{r.records_per_s:,.0f} {r.unit}/s ({r.collector_cores:.2f} cores; other load "
            f"{r.other_cores:.2f}), stored {stored}/{r.acked:,}, answers {r.statuses}"
            + (f"; {r.failed}" if r.failed else ""))


def _n(value: float, digits: int = 0) -> str:
    return "–" if value != value or not value else f"{value:,.{digits}f}"  # NaN or 0


def table(results: Sequence[DoorResult]) -> str:
    lines = ["| Door | µs collector CPU per record | records/s | collector cores | "
             "other load (cores) | stored = acknowledged |",
             "|---|---|---|---|---|---|"]
    for r in results:
        stored = ("?" if r.stored is None else "yes" if r.stored == r.acked else
                  f"**NO** ({r.stored:,} of {r.acked:,})")
        lines.append(f"| {r.label} | {_n(r.cpu_us_per_record, 1)} | {_n(r.records_per_s)} "
                     f"{r.unit}/s | {_n(r.collector_cores, 2)} | {_n(r.other_cores, 2)} | "
                     f"{stored if not r.failed else r.failed} |")
    return "\n".join(lines) + "\n"


# --compare


def best(rounds: Sequence[DoorResult]) -> DoorResult | None:
    """The round with the least CPU per record among those that measured one."""
    measured = [r for r in rounds if r.cpu_us_per_record == r.cpu_us_per_record
                and r.records_per_s > 0]
    return min(measured, key=lambda r: r.cpu_us_per_record) if measured else None


def ratio(current: DoorResult | None, base: DoorResult | None) -> float:
    """CPU per record of this tree over REV's: below 1 is cheaper than REV."""
    if current is None or base is None or not base.cpu_us_per_record:
        return float("nan")
    return current.cpu_us_per_record / base.cpu_us_per_record


def compare_table(rev: str, rounds: dict[str, tuple[list[DoorResult], list[DoorResult]]]
                  ) -> str:
    """`rounds`: door -> (REV's rounds, this tree's rounds)."""
    lines = [f"| Door | {rev} µs/record | this tree µs/record | ratio (this/{rev}) | "
             f"{rev} records/s | this tree records/s | rounds (µs/record, {rev}; this) |",
             "|---|---|---|---|---|---|---|"]
    for name, (base_rounds, current_rounds) in rounds.items():
        base, current = best(base_rounds), best(current_rounds)
        every = "; ".join(", ".join(_n(r.cpu_us_per_record, 1) for r in side)
                          for side in (base_rounds, current_rounds))
        lines.append(
            f"| {SCENARIOS[name].label} | {_n(base.cpu_us_per_record, 1) if base else '–'} | "
            f"{_n(current.cpu_us_per_record, 1) if current else '–'} | "
            f"{_n(ratio(current, base), 3)} | {_n(base.records_per_s) if base else '–'} | "
            f"{_n(current.records_per_s) if current else '–'} | {every} |")
    return "\n".join(lines) + "\n"


def git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout.strip()


@contextlib.contextmanager
def worktree(rev: str) -> Iterator[Path]:
    """REV checked out, detached, in a temporary directory; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="sounding-bench-rev-")) / "tree"
    git("worktree", "add", "--detach", "--quiet", str(folder), rev)
    try:
        yield folder
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=REPO,
                       capture_output=True)
        shutil.rmtree(folder.parent, ignore_errors=True)


def prepare(tree: Path) -> str:
    """Byte-compile `tree` and say which commit it is and where its collector's code
    is imported from, checked by importing it as the collector will."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j0",
                    *[p for p in PACKAGES if (tree / p).is_dir()]], cwd=tree, check=True)
    with tempfile.TemporaryDirectory() as folder:
        probe = subprocess.run(
            [sys.executable, "-c", "import importlib.metadata as m, sounding; "
             "print(sounding.__file__, m.version('sounding'))"],
            cwd=tree, env={**os.environ, "PYTHONPATH": tree_path(tree, Path(folder))},
            capture_output=True, text=True, check=True).stdout.strip()
    source, version = probe.rsplit(" ", 1)
    if Path(source).resolve().parent.parent != tree.resolve():
        raise RuntimeError(f"`import sounding` in {tree} finds {source}")
    dirty = " with uncommitted changes" if git("status", "--porcelain", cwd=tree) else ""
    return f"{git('rev-parse', '--short', 'HEAD', cwd=tree)}{dirty} ({source}, {version})"


def run_doors(names: Sequence[str], warmup: float, seconds: float, connections: int,
              postgres: str | None, collector: Collector = Collector()) -> list[DoorResult]:
    print(f"this tree: {prepare(REPO)}", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="sounding-bench-") as tmp:
        for name in names:
            print(f"{name} ...", flush=True)
            with database(postgres, Path(tmp)) as url:
                result = measure(name, REPO, url, warmup, seconds, connections, collector)
            print(describe(result), flush=True)
            results.append(result)
    return results


def run_compare(rev: str, names: Sequence[str], warmup: float, seconds: float,
                connections: int, postgres: str | None, rounds: int,
                collector: Collector = Collector()
                ) -> dict[str, tuple[list[DoorResult], list[DoorResult]]]:
    out: dict[str, tuple[list[DoorResult], list[DoorResult]]] = {}
    with worktree(rev) as other, tempfile.TemporaryDirectory(prefix="sounding-bench-") as tmp:
        print(f"{rev}: {prepare(other)}", flush=True)
        print(f"this tree: {prepare(REPO)}", flush=True)
        for name in names:
            out[name] = ([], [])
            for i in range(rounds):
                for side, tree in ((0, other), (1, REPO)):
                    who = rev if side == 0 else "this tree"
                    print(f"{name}, round {i + 1}, {who} ...", flush=True)
                    # Each side its own fresh database: REV's migrations may differ.
                    with database(postgres, Path(tmp)) as url:
                        result = measure(name, tree, url, warmup, seconds, connections,
                                         collector)
                    print(describe(result), flush=True)
                    out[name][side].append(result)
    return out
