"""This process's place in a serve group: `sounding serve` with `service.workers`
above 1 (sounding/group.py) runs a leader and that many worker processes.

The leader binds every listening port, migrates, makes the first-run key and admin
token, and owns each SQL exporter's writer process; the workers serve the ports it
bound and hand their batches to that writer over a Unix socket in the group's
directory (exporters/sql/exporter.py). What differs by place is read here, so that
the components ask one question instead of being told their role one by one.
Outside a group (one process, the tests' in-process components) the place is
`SINGLE` and nothing changes.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

SINGLE, LEADER, WORKER = "single", "leader", "worker"


@dataclass(frozen=True)
class Place:
    role: str = SINGLE
    directory: str = ""  # the group's: the writers' sockets, the metrics files
    index: int = 0  # a worker's, 0 to workers - 1; kept across its restarts
    workers: int = 1

    @property
    def in_group(self) -> bool:
        return self.role != SINGLE


_place = Place()


def place() -> Place:
    return _place


def join(new: Place) -> None:
    """Set at start-up, before any component is built."""
    global _place
    _place = new


def writer_socket(exporter: str) -> str:
    """Where the writer of SQL exporter `exporter` takes the workers' connections."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", exporter)
    return os.path.join(_place.directory, f"writer-{safe}.sock")


def share(limit: int) -> int:
    """A worker's share of a bound the group's writer keeps for all of them: each
    worker holds at most this much of it, so the writer's backlog stays within
    `limit` however the load is spread."""
    return max(1, math.ceil(limit / _place.workers))
