"""`sounding serve` over every core: a leader and `service.workers` serve workers.

One event loop serves about one core's worth of requests; the writer rarely needs a
whole one. So past one core the collector runs as a group:

- the **leader** (this module, the process `sounding serve` started) binds every
  listening port (runtime/listen.py: HTTP sockets its workers inherit, gRPC ports
  they share with SO_REUSEPORT), runs what must happen once before anyone serves
  (migrations, the first-run key and admin token, printed once: the extensions of
  `service.LEADER_EXTENSIONS`), owns each SQL exporter's one writer process, and
  announces the listeners once every worker is ready;
- each **worker** (sounding/worker.py) runs the receivers, the pipeline and the
  dashboard on its own event loop, and hands its batches to the leader's writer
  (exporters/sql/exporter.py, runtime/attach.py), which commits every worker's
  batches together: a 202 still means committed. Worker 0 also runs the group's
  alerts and retention (`service.ONCE_PER_GROUP`).

The leader restarts a worker that dies (runtime/supervisor.py, with its backoff);
what that worker had in flight is simply not acknowledged, and the connections
waiting in the shared accept queue are served by the others. On SIGTERM or SIGINT
the leader stops every worker (each drains its requests), then its own exporters
(the writer commits what it holds), then exits. Each process's metrics are kept in
files under the group's directory and summed by whichever worker answers GET
/metrics (runtime/telemetry.py). If the leader itself is killed, every worker and
the writer see their channel close, finish what they hold and exit.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from typing import Any

from prometheus_client import multiprocess

from runtime import group, listen, telemetry
from runtime.supervisor import Supervisor
from sounding import config as config_mod
from sounding.service import Service

log = logging.getLogger("sounding")

START_TIMEOUT = 120.0  # a worker's start: imports, the store, its ports
STOP_TIMEOUT = 75.0  # a worker's drain: its receivers' 30 s each, then its commits


def workers_of(config: dict[str, Any]) -> int:
    """How many serve workers `service.workers` asks for; 1 serves in one process."""
    value = config["service"].get("workers", "auto")
    if value != "auto":
        return int(value)
    # The cores this process may run on (taskset, a cpuset), not the machine's.
    cores = len(os.sched_getaffinity(0)) or 1
    unshared = config_mod.unshared_exporters(config["service"]["pipeline"])
    if cores > 1 and unshared:
        log.info("service.workers auto: one process, since the exporters %s cannot be "
                 "shared by several", ", ".join(unshared))
        return 1
    return cores


async def serve_group(config: dict[str, Any], workers: int,
                      announce: Callable[[Service], None]) -> None:
    """Run the group until SIGTERM or SIGINT, then drain every worker and stop."""
    directory = tempfile.mkdtemp(prefix="sounding-group-")
    metrics = os.path.join(directory, "metrics")
    os.mkdir(metrics)
    # For the processes started from here on: this one counts nothing worth serving.
    os.environ[telemetry.MULTIPROC_DIR] = metrics
    group.join(group.Place(group.LEADER, directory, 0, workers))
    listen.record()
    service = Service(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    members: list[Supervisor] = []
    try:
        await service.start()
        fds, ports = listen.handover()
        passed = tuple(fd for numbers in fds.values() for fd in numbers)
        for index in range(workers):
            members.append(_member(index, config, directory, workers, fds, ports, passed,
                                   metrics))
        await asyncio.gather(*(member.start() for member in members))
        announce(service)
        await stop.wait()
        log.info("stopping: draining every worker")
    finally:
        await asyncio.gather(*(member.shutdown(goodbye=("stop",)) for member in members))
        await service.shutdown()
        listen.release()
        shutil.rmtree(directory, ignore_errors=True)
    log.info("stopped")


def _member(index: int, config: dict[str, Any], directory: str, workers: int,
            fds: dict[str, list[int]], ports: dict[str, int], passed: tuple[int, ...],
            metrics: str) -> Supervisor:
    settings = {"config": config, "directory": directory, "index": index,
                "workers": workers, "fds": fds, "ports": ports}
    member: Supervisor

    def gone(code: int | None) -> None:
        # Its requests in flight are not acknowledged; their clients retry. Its
        # gauges leave /metrics with it, its counters stay.
        if member.pid is not None:
            multiprocess.mark_process_dead(member.pid, metrics)
        log.error("serve worker %d stopped (exit code %s)", index, code)

    member = Supervisor(f"serve worker {index}", "sounding.worker", lambda: settings,
                        on_item=lambda _item: None, on_exit=gone,
                        start_timeout=START_TIMEOUT, stop_timeout=STOP_TIMEOUT,
                        pass_fds=passed)
    return member
