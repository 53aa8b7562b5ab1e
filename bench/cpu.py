"""CPU accounting from /proc: what the collector used, and what everything else did.

On a shared machine the throughput of one run says little alone; the collector's
CPU seconds per record, and how busy the machine was apart from the collector and
the load generator, say how far to trust it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int | str) -> list[str]:
    """The fields of /proc/PID/stat after the command name ([0] is field 3, the state)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def process_seconds(pid: int) -> float:
    """CPU time of `pid` and of the children it has reaped: a process that ends between
    two samples (a decode worker replaced) still counts, in its parent's total."""
    fields = _stat(pid)
    # utime + stime + cutime + cstime
    return sum(int(v) for v in fields[11:15]) / TICKS if fields else 0.0


def group(pgid: int) -> list[int]:
    """Every process of process group `pgid`: a collector started as a group leader
    with all it starts (writer, decode workers), however deep."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(entry.name)
            if len(fields) > 2 and int(fields[2]) == pgid:
                found.append(int(entry.name))
    return found


def is_writer(pid: int) -> bool:
    """Whether `pid` is a collector's writer process (exporters/sql/writer.py)."""
    try:
        return b"exporters.sql.writer" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def machine_seconds() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / TICKS, sum(values) / TICKS


@dataclass
class Sample:
    wall: float
    server: float
    busy: float
    total: float


def sample(pids: list[int]) -> Sample:
    busy, total = machine_seconds()
    return Sample(time.monotonic(), sum(process_seconds(p) for p in pids), busy, total)


@dataclass
class Usage:
    seconds: float  # wall-clock length of the window
    server_cores: float  # CPU the collector used, in cores
    machine_cores: float  # CPU the whole machine used, in cores


def usage(start: Sample, end: Sample) -> Usage:
    wall = max(end.wall - start.wall, 1e-9)
    cores = (os.cpu_count() or 1) * (end.busy - start.busy) / max(end.total - start.total, 1e-9)
    return Usage(wall, (end.server - start.server) / wall, cores)
