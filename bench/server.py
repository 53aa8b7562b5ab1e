"""Start a source tree's `sounding serve` as a user would, and read its processes' peak
memory from /proc."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path

from bench import cpu

LISTENING = re.compile(r"Sounding listening on ((?:http|grpc)://(\S+):(\d+))")
# Word characters only, so that it can be the public key of a DSN (the Sentry rows).
BENCH_KEY = "benchkey0123456789abcdef01234567"


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found + [g for c in found for g in children(c)]


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


REPO = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def database(postgres: str | None, folder: Path) -> Iterator[str]:
    """A fresh database: a SQLite file in `folder`, or with `postgres` (an admin URL) a
    new PostgreSQL database beside it, dropped afterwards."""
    if not postgres:
        yield f"sqlite:///{folder / f'bench-{uuid.uuid4().hex[:8]}.db'}"
        return
    import psycopg

    admin = postgres.replace("postgresql+psycopg://", "postgresql://")
    name = f"sounding_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{admin.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def tree_path(tree: Path, folder: Path) -> str:
    """PYTHONPATH for the code of source tree `tree`: the tree, then in `folder` the
    distribution metadata of its own pyproject.toml. Sounding finds its components
    through entry points, and the installed metadata (of the checkout the virtual
    environment was installed from) may name modules or objects an older tree does
    not have; the first `sounding` distribution on the path is the one read."""
    project = tomllib.loads((tree / "pyproject.toml").read_text())["project"]
    groups = {"console_scripts": project.get("scripts", {}),
              **project.get("entry-points", {})}
    info = folder / f"sounding-{project['version']}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: sounding\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items())
        + "\n" for group, entries in groups.items()))
    return os.pathsep.join((str(tree), str(folder)))


class BenchServer:
    """`sounding serve` of the source tree `tree` (this one by default), run as
    `python -m sounding serve` from that directory, which Python puts first on its
    path: the editable install (which maps `sounding` to one checkout) cannot shadow
    it, nor its entry points those of the tree (`tree_path`). It leads its own process
    group, so that every process it starts (the writer, the decode workers) can be
    found and counted (bench/cpu.py)."""

    def __init__(self, db_url: str, env: dict[str, str] | None = None,
                 tree: Path = REPO, cpus: str | None = None) -> None:
        self.db_url = db_url
        self.tree = tree
        self.workdir = Path(tempfile.mkdtemp(prefix="sounding-bench-"))
        self.log_path = self.workdir / "server.log"
        full_env = {k: v for k, v in os.environ.items()
                    if not k.startswith("SOUNDING") and k != "PYTHONPATH"}
        full_env.update({
            "PYTHONPATH": tree_path(tree, self.workdir / "metadata"),
            "SOUNDING_DATABASE_URL": db_url,
            "SOUNDING_HTTP_HOST": "127.0.0.1",
            "SOUNDING_HTTP_PORT": "0",
            "SOUNDING_API_KEYS": f"bench:{BENCH_KEY}",
            "SOUNDING_GRPC_PORT": "0",
            "SOUNDING__RECEIVERS__OTLP_GRPC__HOST": "127.0.0.1",
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        })
        self._log = self.log_path.open("w")
        # taskset execs the collector in its own place: the pid (and its process group)
        # is the collector's, and every process it starts inherits the cores.
        pinned = ["taskset", "-c", cpus] if cpus else []
        self.proc = subprocess.Popen([*pinned, sys.executable, "-m", "sounding", "serve"],
                                     env=full_env,
                                     cwd=tree, process_group=0, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.http: tuple[str, int] | None = None
        self.grpc: tuple[str, int] | None = None
        self._ready = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()
        if not self._ready.wait(60) or self.http is None:
            self.proc.kill()
            raise RuntimeError(f"sounding serve did not start:\n{self.log_path.read_text()}")
        time.sleep(0.5)  # let a gRPC line printed right after the HTTP one arrive
        # Where the collector runs, hence whose code `-m sounding` imported.
        self.cwd: Path = Path(os.readlink(f"/proc/{self.proc.pid}/cwd")).resolve()
        self.peak_children_kb = 0

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._log.write(line)
            self._log.flush()
            match = LISTENING.search(line)
            if match:
                address = (match.group(2), int(match.group(3)))
                if match.group(1).startswith("grpc"):
                    self.grpc = address
                elif self.http is None:
                    self.http = address
                self._ready.set()
        self._ready.set()

    def pids(self) -> list[int]:
        return cpu.group(self.proc.pid)

    def peak_rss_mb(self) -> float:
        """VmHWM of the collector and of any helper process it runs, summed."""
        return sum(_status_kb(pid, "VmHWM") for pid in self.pids()) / 1024

    def stop(self, timeout: float = 120) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._log.close()
        return code

    def count(self, sql: str) -> int:
        # Imported here: every load process imports this module (for BENCH_KEY), and
        # SQLAlchemy would add to the time it takes to be ready on a busy machine.
        from sqlalchemy import create_engine, text

        engine = create_engine(self.db_url)
        try:
            with engine.connect() as conn:
                return int(conn.execute(text(sql)).scalar() or 0)
        finally:
            engine.dispose()

    def log(self) -> str:
        return self.log_path.read_text()

    def cleanup(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)


class BenchCluster:
    """Several `sounding serve` processes on one port (SO_REUSEPORT) and one database:
    how Sounding uses more cores than one event loop can (docs/operating.md, "Performance
    and durability")."""

    def __init__(self, db_url: str, processes: int, env: dict[str, str] | None = None) -> None:
        shared = {"SOUNDING__RECEIVERS__HTTP__REUSE_PORT": "true", **(env or {})}
        self.db_url = db_url
        self.servers = [BenchServer(db_url, shared)]
        assert self.servers[0].http is not None
        port = str(self.servers[0].http[1])
        try:
            for _ in range(processes - 1):
                self.servers.append(BenchServer(db_url, {**shared, "SOUNDING_HTTP_PORT": port}))
        except Exception:
            self.stop()
            raise
        self.http = self.servers[0].http
        self.grpc = self.servers[0].grpc  # gRPC is not shared: the first process's port
        self.log_path = self.servers[0].log_path

    def pids(self) -> list[int]:
        return [pid for server in self.servers for pid in server.pids()]

    def peak_rss_mb(self) -> float:
        return sum(server.peak_rss_mb() for server in self.servers)

    def stop(self, timeout: float = 120) -> int:
        codes = [server.stop(timeout) for server in self.servers]
        return next((code for code in codes if code != 0), 0)

    def count(self, sql: str) -> int:
        return self.servers[0].count(sql)

    def log(self) -> str:
        return "".join(server.log() for server in self.servers)

    def cleanup(self) -> None:
        for server in self.servers:
            server.cleanup()
