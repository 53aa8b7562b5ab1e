"""Starting the real collector, `python -m sounding serve`, as a user would."""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine

from tests.support.templates import migrated_sqlite

REPO = Path(__file__).resolve().parents[2]
# One line per listener: http:// ones (the first is the ingestion API, `base`), then
# grpc:// ones.
LISTENING = re.compile(r"Sounding listening on ((?:http|grpc)://\S+)")


@dataclass
class Server:
    proc: subprocess.Popen[str]
    db_url: str
    keys: dict[str, str]
    urls: list[str] = field(default_factory=list)
    grpc_urls: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    _engine: Engine | None = None

    @property
    def base(self) -> str:
        return self.urls[0]

    @property
    def grpc_target(self) -> str:
        """host:port of the gRPC receiver, for grpc.insecure_channel."""
        deadline = time.monotonic() + 10
        # The listeners are announced together; the gRPC line may trail the HTTP one.
        while not self.grpc_urls:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"no gRPC listener was announced:\n{self.log()}")
            time.sleep(0.02)
        return self.grpc_urls[0].removeprefix("grpc://")

    @property
    def key(self) -> str:
        return next(iter(self.keys.values()))

    @property
    def project(self) -> str:
        """The project of `key`: the first of `keys`."""
        return next(iter(self.keys))

    def project_id(self) -> int:
        """The project's id in the store."""
        return int(self.query("SELECT id FROM projects WHERE name = :name",
                              name=self.project)[0][0])

    def project_rows(self, table: str, columns: str = "*", order_by: str | None = None
                     ) -> list[Any]:
        """The rows of `table` that are the project's."""
        order = f" ORDER BY {order_by}" if order_by else ""
        return self.query(f"SELECT {columns} FROM {table} WHERE project_id = :project{order}",
                          project=self.project_id())

    def project_url(self, path: str = "") -> str:
        """A page of the project's on the dashboard: /projects/<project><path>."""
        return f"{self.base}/projects/{self.project}{path}"

    def project_api(self, path: str = "") -> str:
        """The project's read API: /api/v1/projects/<project><path>."""
        return f"{self.base}/api/v1/projects/{self.project}{path}"

    def for_project(self, project: str) -> Server:
        """This collector as one of its projects sees it: `key`, `project` and what is
        posted with them are that project's (see `Projects`)."""
        # The same engine: its connections are closed when this collector stops.
        return dataclasses.replace(self, keys={project: self.keys[project]},
                                   _engine=self.db())

    def headers(self, key: str | None = None, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key or self.key}",
                "Content-Type": "application/json", **extra}

    def post(self, path: str, json: Any = None, key: str | None = None, **kwargs: Any
             ) -> requests.Response:
        headers = self.headers(key, **kwargs.pop("headers", {}))
        return requests.post(self.base + path, json=json, headers=headers, timeout=30, **kwargs)

    def db(self) -> Engine:
        """A read connection to the collector's own store."""
        if self._engine is None:
            self._engine = create_engine(self.db_url.replace("postgresql://",
                                                             "postgresql+psycopg://"))
        return self._engine

    def query(self, sql: str, **params: Any) -> list[Any]:
        with self.db().connect() as conn:
            return list(conn.execute(text(sql), params))

    def spans_per_trace(self) -> dict[str, int]:
        """Stored spans counted by trace id (hex)."""
        return {bytes(trace_id).hex(): count for trace_id, count in self.query(
            "SELECT trace_id, count(*) FROM spans GROUP BY trace_id")}

    def log(self) -> str:
        return "".join(self.output)

    def metric(self, name: str, **labels: str) -> float | None:
        """A sample of /metrics (the first whose labels include `labels`); None: absent."""
        text = requests.get(self.base + "/metrics", timeout=10).text
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == name and all(sample.labels.get(k) == v
                                               for k, v in labels.items()):
                    return sample.value
        return None

    def wait_for_metric(self, name: str, value: float, timeout: float = 20, **labels: str
                        ) -> None:
        """Until the sample reaches `value`: a counter is raised after the work it
        counts is visible elsewhere (a forwarded row is deleted, then counted)."""
        deadline = time.monotonic() + timeout
        while (seen := self.metric(name, **labels) or 0) < value:
            if time.monotonic() > deadline:
                raise AssertionError(f"{name}{labels} stayed at {seen}, short of {value} "
                                     f"after {timeout} s")
            time.sleep(0.05)

    def wait_for_log(self, text: str, timeout: float = 10) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.log():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"{text!r} never appeared in the log:\n{self.log()}")
            time.sleep(0.05)
        return self.log()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        if self._engine is not None:
            self._engine.dispose()
        return code


def project_keys(count: int = 40) -> dict[str, str]:
    """`count` projects and their keys, for a collector whose tests each take one (40:
    more than any module has tests for one store)."""
    return {f"project-{n}": f"test-key-project-{n}" for n in range(count)}


class Projects:
    """One collector shared by a module's tests, a project of its keys to each test: what
    a test stores and changes is then in a project no other test reads, and each test
    still starts from an empty project, whatever ran before it. A collector start costs
    seconds of CPU; the suite used to make one for each such test."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._unused = iter(server.keys)

    def take(self) -> Server:
        """The collector as seen by a project no test has taken yet."""
        project = next(self._unused, None)
        if project is None:
            raise AssertionError(f"all {len(self.server.keys)} projects are taken: start "
                                 "the module's collector with more (project_keys)")
        return self.server.for_project(project)


def start_server(db_url: str, keys: dict[str, str] | None = None,
                 env: dict[str, str | None] | None = None, config: str | None = None,
                 wait_for: int = 1, cwd: Path | None = None) -> Server:
    keys = {"acme": "test-key-acme"} if keys is None else keys
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("SOUNDING")}
    full_env.update({
        "SOUNDING_DATABASE_URL": db_url,
        "SOUNDING_HTTP_PORT": "0",
        "SOUNDING_HTTP_HOST": "127.0.0.1",
        # Every listener on a free port of the loopback, so tests never collide.
        "SOUNDING_GRPC_PORT": "0",
        "SOUNDING__RECEIVERS__OTLP_GRPC__HOST": "127.0.0.1",
        "SOUNDING_OTLP_HTTP_PORT": "0",
        "SOUNDING__RECEIVERS__OTLP_HTTP__HOST": "127.0.0.1",
        "SOUNDING_API_KEYS": ",".join(f"{p}:{k}" for p, k in keys.items()),
        # Every trace request through a decode worker (runtime/offload.py), however
        # small: the path large requests take in production. tests/sounding/
        # test_offload.py covers decoding on the event loop.
        "SOUNDING__SERVICE__DECODE_MIN_BYTES": "0",
        # Not shedding on event-loop lag: on a busy test machine the loop is late at
        # random; tests/runtime/test_admission.py turns it on where it is tested.
        "SOUNDING__SERVICE__MAX_EVENT_LOOP_LAG_MS": "0",
        # One serve process, not the default of one per core: the suite starts some 600
        # collectors, and a group costs each start two more processes (and their CPU).
        # tests/sounding/test_group.py runs the group, as the default does, and starts
        # one with nothing set (None removes a variable).
        "SOUNDING_WORKERS": "1",
        "PYTHONUNBUFFERED": "1",
    })
    full_env.update(env or {})
    full_env = {k: v for k, v in full_env.items() if v is not None}
    args = [sys.executable, "-m", "sounding"]
    if config:
        args += ["--config", config]
    proc = subprocess.Popen(args + ["serve"], cwd=cwd or REPO, env=full_env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    server = Server(proc=proc, db_url=db_url, keys=keys)
    ready = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            server.output.append(line)
            match = LISTENING.search(line)
            if match:
                url = match.group(1)
                (server.grpc_urls if url.startswith("grpc://") else server.urls).append(url)
                if len(server.urls) >= wait_for:
                    ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + 60
    while not ready.wait(0.1):
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("the server did not start:\n" + server.log())
    if len(server.urls) < wait_for:
        proc.wait(5)
        raise RuntimeError(f"the server exited with {proc.returncode}:\n" + server.log())
    return server


def check_quiet(server: Server) -> None:
    """Noise is a bug: a clean run logs no traceback."""
    assert "Traceback" not in server.log(), server.log()


@contextmanager
def collectors(folder: Path) -> Iterator[Callable[..., Server]]:
    """Start collectors (on SQLite in `folder` unless given a URL); at the end each is
    stopped with SIGTERM and must exit 0 and log no traceback. A module-scoped fixture
    may hold one over its module's tests that store nothing another test reads: a
    start costs seconds of CPU (three processes, the migrations)."""
    servers: list[Server] = []

    def _start(db_url: str | None = None, **kwargs: Any) -> Server:
        if db_url is None:
            path = folder / "sounding.db"
            # At the newest migration already (tests/support/templates.py), unless a
            # collector made it before this one.
            db_url = f"sqlite:///{path}" if path.exists() else migrated_sqlite(path)
        server = start_server(db_url, **kwargs)
        servers.append(server)
        return server

    try:
        yield _start
    except BaseException:
        # The holder failed before its tests ran (a module fixture sending data first):
        # stop its collectors all the same, and let its own error be the one reported.
        for server in servers:
            server.stop()
        raise
    for server in servers:
        code = server.stop()
        assert code == 0, f"collector exited with {code}:\n{server.log()}"
        check_quiet(server)
