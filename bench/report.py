"""The results as Markdown: the machine, the commit, the table, the floors."""

from __future__ import annotations

import datetime as dt
import math
import os
import platform
import sqlite3
import subprocess
from pathlib import Path

from bench.floor import Floor
from bench.overload import OverloadResult
from bench.run import ScenarioResult

REPO = Path(__file__).resolve().parents[1]
# Issue 4's targets on a 2-core machine, SQLite, durable acknowledgement.
TARGETS = {"traces_proto": 50_000, "errors_batch": 20_000, "errors_single": 3_000}
TARGET_P99_MS = 50.0
TARGET_RSS_MB = 200.0


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        mem_kb = 0
    return (f"{os.cpu_count()} cores ({model}), {mem_kb / 1024 / 1024:.0f} GiB, "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()}, "
            f"SQLite {sqlite3.sqlite_version}")


def commit() -> str:
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    sha = git("rev-parse", "--short", "HEAD") or "unknown"
    return sha + (" (with uncommitted changes)" if git("status", "--porcelain") else "")


def _n(value: float, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}"


def _scenario_row(r: ScenarioResult) -> str:
    if r.skipped:
        return f"| {r.label} | skipped: {r.skipped} | | | | | | |"
    target = TARGETS.get(r.name)
    rate = f"{_n(r.saturation_per_s)} {r.unit}/s"
    if target:
        rate += f" ({r.saturation_per_s / target:.0%} of {target:,})"
    stored = ("yes" if r.stored_ok else "**NO**") + f" ({r.stored:,} of {r.acked:,})"
    rss = _n(r.peak_rss_mb)
    if r.processes > 1:
        rss += f" ({r.processes} collectors, {r.peak_rss_mb / r.processes:,.0f} each)"
    return (f"| {r.label} | {rate} | {_n(r.cpu_us_per_record, 1)} | {_n(r.p50_ms, 1)} | "
            f"{_n(r.p99_ms, 1)} | {rss} | {_n(r.other_cores, 2)} | {stored} |")


def render(results: list[ScenarioResult], floor: Floor | None,
           overload: OverloadResult | None, db_label: str, notes: list[str]) -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmark results",
        "",
        f"- Date: {now}",
        f"- Commit: {commit()}",
        f"- Machine: {machine()}",
        f"- Store: {db_label}, durable acknowledgement (202 only after commit)",
        "- Load: two load processes on loopback, keep-alive connections, request bodies "
        "built before the clock starts (`python -m bench ingest`, bench/ingest.py); "
        "a fresh `sounding serve` and database per row",
        "",
        "| Scenario | Saturation | Collector CPU µs/record | p50 ms at half rate | "
        "p99 ms at half rate | Peak RSS MB | Other load (cores) | Stored = acknowledged |",
        "|---|---|---|---|---|---|---|---|",
        *[_scenario_row(r) for r in results],
        "",
        "Collector CPU µs/record is the collector's CPU time (all its processes) per "
        "record at saturation; unlike the rate, it hardly depends on what else runs on "
        "the machine. \"Other load\" is the CPU the rest of the machine used meanwhile "
        "(other tenants): on two cores, every 0.5 is a quarter of the machine the "
        "collector did not have. Peak RSS is the sum of VmHWM over the collector's "
        "processes (each `sounding serve` runs one writer process beside it).",
    ]
    if floor is not None:
        proto = next((r for r in results if r.name == "traces_proto" and r.saturation_per_s),
                     None)
        lines += [
            "",
            "## Floor of the stack (one process, same span payloads)",
            "",
            "| Step | spans/s |",
            "|---|---|",
            f"| protobuf parse alone | {_n(floor.parse_per_s)} |",
            f"| SQLite executemany of the same rows alone | {_n(floor.insert_per_s)} |",
            f"| both, back to back on one core | {_n(floor.combined_per_s)} |",
            f"| for information: Sounding's Python per span (decode, processors, rows) | "
            f"{_n(floor.python_per_s)} |",
        ]
        if proto is not None:
            lines += ["", f"Sounding end to end (OTLP/HTTP protobuf): "
                          f"{_n(proto.saturation_per_s)} spans/s = "
                          f"**{proto.saturation_per_s / floor.combined_per_s:.0%} of the floor**."]
    if overload is not None:
        o = overload
        lines += [
            "",
            f"## Overload: {o.offered_per_s:,.0f} spans/s offered (twice saturation) for "
            f"{o.seconds:.0f} s",
            "",
            f"- Accepted {o.accepted_per_s:,.0f} spans/s; answers: "
            + ", ".join(f"{n:,} × {s}" for s, n in sorted(o.statuses.items())),
            f"- Peak RSS {o.peak_rss_mb:,.0f} MB (bound {TARGET_RSS_MB:.0f} MB: "
            f"{'kept' if o.peak_rss_mb < TARGET_RSS_MB else '**exceeded**'})",
            f"- /health: {o.health_checks} checks every 0.5 s, {o.health_failures} failed, "
            f"slowest {o.health_max_ms:,.0f} ms",
            f"- Stored = acknowledged: {'yes' if o.stored_ok else '**NO**'} "
            f"({o.stored:,} of {o.acked:,}); exit code {o.exit_code}",
        ]
    if notes:
        lines += ["", "## Notes", "", *[f"- {n}" for n in notes]]
    return "\n".join(lines) + "\n"


def write_block(text: str, path: Path, begin: str, end: str) -> None:
    """Put `text` between the `begin` and `end` markers of `path`, replacing what was
    there, or append the block when the file has none yet."""
    block = f"{begin}\n{text}{end}\n"
    old = path.read_text() if path.exists() else ""
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + block + rest.split(end, 1)[1].lstrip("\n")
    else:
        new = old + ("\n" if old else "") + block
    path.write_text(new)
