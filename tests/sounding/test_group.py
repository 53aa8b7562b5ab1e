"""`service.workers` above 1 (sounding/group.py): a leader, N serve workers on the
ports it bound, one writer for all of them. Real processes on real sockets: health,
graceful shutdown, kill -9 of a worker, of the writer and of the whole group with
nothing acknowledged lost, shedding, and /metrics summed over the workers."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import requests
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from tests.receiver.otlp_helpers import (
    grpc_auth,
    random_trace_id,
    request_of,
    span_pb,
    stored_spans,
)
from tests.support.server import Server, start_server

WORKERS = "2"


def children(pid: int) -> dict[int, str]:
    """The processes `pid` started, by pid, with their command lines."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return {}
    found = {}
    for child in map(int, text.split()):
        try:
            found[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")\
                .decode()
        except OSError:
            continue
    return found


def workers(server: Server) -> list[int]:
    return sorted(pid for pid, cmd in children(server.proc.pid).items()
                  if "sounding.worker" in cmd)


def writer(server: Server) -> int:
    (pid,) = [pid for pid, cmd in children(server.proc.pid).items()
              if "exporters.sql.writer" in cmd]
    return pid


def group_directory(server: Server) -> Path:
    """The group's directory (the writer's socket, the metrics files), as its leader
    handed it to the workers."""
    environ = Path(f"/proc/{workers(server)[0]}/environ").read_bytes()
    return Path(environ.split(b"PROMETHEUS_MULTIPROC_DIR=")[1].split(b"\0")[0].decode()).parent


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {timeout} s")
        time.sleep(0.05)


def start_group(start: Callable[..., Server], db_url: str | None = None, **env: str
                ) -> Server:
    server = start(db_url, env={"SOUNDING_WORKERS": WORKERS, **env})
    assert len(workers(server)) == int(WORKERS), server.log()
    return server


def start_killed(db_url: str, **kwargs: Any) -> Server:
    """Not `start`'s, which requires an exit 0 at the end."""
    return start_server(db_url, **kwargs)


def error(message: str) -> dict[str, object]:
    return {"exception_class": "GroupError", "message": message,
            "backtrace": ["app.py:1 in f"], "fingerprint": "group"}


def stored_messages(db_url: str) -> set[str]:
    path = db_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute("SELECT message FROM error_events")}


class Load:
    """Clients sending errors, each on a new connection, until stopped; what was
    answered 202 is recorded."""

    def __init__(self, server: Server, clients: int = 4) -> None:
        self.server = server
        self.acked: set[str] = set()
        self.statuses: list[int] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(n,)) for n in range(clients)]
        self._lock = threading.Lock()

    def _run(self, client: int) -> None:
        sent = 0
        while not self._stop.is_set():
            message = f"c{client}-{sent}"
            sent += 1
            try:
                response = requests.post(self.server.base + "/ingest/errors",
                                         json=error(message), headers=self.server.headers(),
                                         timeout=30)
            except requests.RequestException:
                continue  # its worker died: not acknowledged
            with self._lock:
                self.statuses.append(response.status_code)
                if response.status_code == 202:
                    self.acked.add(message)

    @contextmanager
    def running(self) -> Iterator[Load]:
        for thread in self._threads:
            thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            for thread in self._threads:
                thread.join(60)

    def wait_for(self, acked: int) -> None:
        wait_until(lambda: len(self.acked) >= acked, f"{acked} requests acknowledged")


def test_with_nothing_set_serve_runs_one_worker_per_core_it_may_use(
        start: Callable[..., Server]) -> None:
    server = start(env={"SOUNDING_WORKERS": None})  # the default, as `make run` starts
    cores = len(os.sched_getaffinity(0))
    assert len(workers(server)) == (cores if cores > 1 else 0), server.log()
    assert server.post("/ingest/errors", error("default")).status_code == 202


def test_the_group_serves_health_on_every_worker_and_is_unhealthy_without_its_writer(
        start: Callable[..., Server]) -> None:
    server = start_group(start)
    assert server.post("/ingest/errors", error("one")).status_code == 202
    for _ in range(10):  # new connections, served by either worker
        response = requests.get(server.base + "/health", timeout=10)
        assert response.status_code == 200, response.text
        assert response.json()["db_ok"] is True
    os.kill(writer(server), signal.SIGSTOP)  # a writer that does not answer: still up
    os.kill(writer(server), signal.SIGKILL)
    # Until each worker is connected to a new writer, it answers 503.
    wait_until(lambda: requests.get(server.base + "/health", timeout=10).status_code == 503,
               "a worker answered /health 503 without its writer")
    wait_until(lambda: all(requests.get(server.base + "/health", timeout=10).status_code == 200
                           for _ in range(6)), "every worker healthy with the new writer")
    assert server.post("/ingest/errors", error("two")).status_code == 202


def test_sigterm_drains_every_worker_then_the_writer_and_exits_0(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start_group(start, sqlite_url)
    pids = [*workers(server), writer(server)]
    directory = group_directory(server)
    with Load(server).running() as load:
        load.wait_for(20)
        server.proc.send_signal(signal.SIGTERM)
        code = server.proc.wait(60)
    assert code == 0, server.log()
    assert not [pid for pid in pids if alive(pid)]
    assert not directory.exists()
    assert load.acked <= stored_messages(sqlite_url)
    assert "draining every worker" in server.log()
    assert "Traceback" not in server.log(), server.log()


def test_a_worker_killed_loses_nothing_acknowledged_and_is_started_again(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start_group(start, sqlite_url)
    victim = workers(server)[0]
    with Load(server).running() as load:
        load.wait_for(20)
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: len(workers(server)) == int(WORKERS) and victim not in
                   workers(server), "a new worker in its place")
        acked = len(load.acked)
        load.wait_for(acked + 20)  # served on
    assert load.acked <= stored_messages(sqlite_url)
    assert "serve worker" in server.log()


def test_the_writer_killed_loses_nothing_acknowledged(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start_group(start, sqlite_url)
    with Load(server).running() as load:
        load.wait_for(20)
        os.kill(writer(server), signal.SIGKILL)
        acked = len(load.acked)
        load.wait_for(acked + 20)  # a new writer, and every worker back on it
    assert load.acked <= stored_messages(sqlite_url)


def test_the_whole_group_killed_loses_nothing_acknowledged(sqlite_url: str) -> None:
    server = start_group(start_killed, sqlite_url)
    pids = [server.proc.pid, *workers(server), writer(server)]
    directory = group_directory(server)
    with Load(server).running() as load:
        load.wait_for(20)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        server.proc.wait(10)
    wait_until(lambda: not [pid for pid in pids if alive(pid)], "every process gone")
    shutil.rmtree(directory)  # the leader, killed, could not
    assert load.acked
    assert load.acked <= stored_messages(sqlite_url)


def test_the_leader_killed_lets_its_workers_and_writer_finish_and_exit(
        sqlite_url: str) -> None:
    server = start_group(start_killed, sqlite_url)
    pids = [*workers(server), writer(server)]
    directory = group_directory(server)
    with Load(server).running() as load:
        load.wait_for(20)
        server.proc.kill()
        server.proc.wait(10)
    wait_until(lambda: not [pid for pid in pids if alive(pid)], "the orphans gone", 60)
    shutil.rmtree(directory)  # the leader, killed, could not
    assert load.acked <= stored_messages(sqlite_url)


def test_a_worker_sheds_past_its_in_flight_bound_with_retry_after(
        start: Callable[..., Server], sqlite_url: str) -> None:
    server = start_group(start, sqlite_url,
                         SOUNDING__SERVICE__MAX_REQUESTS_IN_FLIGHT="2")
    path = sqlite_url.removeprefix("sqlite:///")
    lock = sqlite3.connect(path, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the writer's commits wait for it
    try:
        with ThreadPoolExecutor(12) as pool:
            futures = [pool.submit(requests.post, server.base + "/ingest/errors",
                                   json=error(f"s{n}"), headers=server.headers(), timeout=60)
                       for n in range(12)]
            # Two per worker wait for the commit; the rest are refused at once.
            wait_until(lambda: sum(f.done() for f in futures) >= 8, "the rest refused")
            lock.execute("ROLLBACK")
            answers = [f.result() for f in futures]
    finally:
        lock.close()
    refused = [a for a in answers if a.status_code == 503]
    assert len(refused) >= 8, [a.status_code for a in answers]
    assert all(a.headers.get("Retry-After") for a in refused)
    accepted = {f"s{n}" for n, a in enumerate(answers) if a.status_code == 202}
    assert accepted and accepted <= stored_messages(sqlite_url)


def counters(text: str, name: str) -> float:
    return sum(sample.value for family in text_string_to_metric_families(text)
               for sample in family.samples if sample.name == name)


def test_metrics_are_summed_over_every_worker(start: Callable[..., Server]) -> None:
    server = start_group(start)
    worker_pids = workers(server)
    directory = group_directory(server) / "metrics"
    sent = 0

    def counted_by() -> dict[int, float]:
        """Errors accepted as each worker counted them, from its own file alone."""
        counts = {}
        for pid in worker_pids:
            alone = tempfile.mkdtemp()
            try:
                for file in directory.glob(f"counter_{pid}.db"):
                    shutil.copy(file, alone)
                registry = CollectorRegistry()
                MultiProcessCollector(registry, path=alone)
                counts[pid] = sum(s.value for m in registry.collect() for s in m.samples
                                  if s.name == "sounding_records_accepted_total"
                                  and s.labels.get("signal") == "errors")
            finally:
                shutil.rmtree(alone)
        return counts

    with ThreadPoolExecutor(4) as pool:
        for _ in range(50):  # until both workers have served some
            answers = list(pool.map(lambda n: server.post("/ingest/errors", error(f"m{n}")),
                                    range(sent, sent + 8)))
            assert {a.status_code for a in answers} == {202}
            sent += 8
            if all(counted_by().values()):
                break
    assert all(counted_by().values()), counted_by()
    assert sum(counted_by().values()) == sent
    for _ in range(6):  # whichever worker answers, the group's sum
        text = requests.get(server.base + "/metrics", timeout=10).text
        assert counters(text, "sounding_records_accepted_total") == sent
        assert counters(text, "sounding_commit_records_sum") == sent
        assert "sounding_build_info{" in text
        # A family nothing counted yet is shown all the same, as by one process.
        assert "# TYPE sounding_decode_worker_restarts_total counter" in text
        assert "# TYPE sounding_alerts_total counter" in text


def test_otlp_grpc_is_served_on_the_port_the_leader_reserved(
        start: Callable[..., Server]) -> None:
    server = start_group(start)
    trace_id = random_trace_id()
    span_ids = [f"{n:016x}" for n in range(1, 13)]
    for span_id in span_ids:  # a connection each: the kernel picks a worker for each
        with grpc.insecure_channel(server.grpc_target) as channel:
            response = trace_service_pb2_grpc.TraceServiceStub(channel).Export(
                request_of(span_pb(trace_id, span_id)), metadata=grpc_auth(server),
                timeout=30)
            assert not response.HasField("partial_success")
    assert sorted(s["span_id"] for s in stored_spans(server, trace_id)) == span_ids
    # Every worker listens on it beside the leader's reservation (SO_REUSEPORT).
    port = server.grpc_target.rsplit(":", 1)[1]
    for pid in workers(server):
        assert port in listening_ports(pid), pid
    # The leader's reservation takes no connection: it does not listen.
    assert port not in listening_ports(server.proc.pid)


def listening_ports(pid: int) -> set[str]:
    """The TCP ports `pid` listens on, from its sockets and /proc/net/tcp."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                ports.add(str(int(fields[1].rsplit(":", 1)[1], 16)))
    return ports
