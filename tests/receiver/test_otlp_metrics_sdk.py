"""The OpenTelemetry Python metrics SDK (OTLPMetricExporter over HTTP protobuf,
configured by OTEL_EXPORTER_OTLP_* only) recording `http.server.request.duration`
over several export intervals: performance shows exactly the requests recorded,
their errors and their p95 within the histogram's resolution, with the SDK's
default cumulative temporality, with delta, with exponential histograms, and
across a restart of the collector between exports; and, over HTTP and gRPC, every
read of the latency quantiles in the bucket of the true value, cumulative or delta."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from storage.queries import metric_series, performance
from storage.store import Store
from tests.support import clients
from tests.support.server import Projects, Server, collectors, project_keys

pytestmark = pytest.mark.clients(clients.OPENTELEMETRY_PYTHON)

HERE = Path(__file__).resolve().parent
# Three export intervals: 60 fast requests, 30 more with 10 server errors, then 10
# slow ones. Of 100: 90 at most 0.1 s, so p95 is among the 0.3 s ones.
INTERVALS = [
    [[0.02, 200, "/cart"]] * 40 + [[0.04, 200, "/pay"]] * 20,
    [[0.03, 200, "/cart"]] * 20 + [[0.08, 500, "/pay"]] * 10,
    [[0.3, 200, "/cart"]] * 10,
]


class SdkApp:
    """The SDK application: one process across every export interval."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc

    def export(self, requests: list[list[Any]]) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(requests) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert json.loads(line) == {"result": "SUCCESS"}, line


@contextmanager
def sdk_app(endpoint: str, key: str, **otel: str) -> Iterator[SdkApp]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update({"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
                "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer {key}",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", **otel})
    python = clients.python(clients.OPENTELEMETRY_PYTHON)
    proc = subprocess.Popen([python, "-P", str(HERE / "otlp_sdk_metrics_client.py")],
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        yield SdkApp(proc)
    finally:
        assert proc.stdin is not None and proc.stderr is not None
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
        proc.stderr.close()
        assert proc.stdout is not None
        proc.stdout.close()


@pytest.fixture(scope="module")
def projects(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[Projects]:
    """The module's collector per store, the OTLP port open too; a project per test."""
    with collectors(tmp_path_factory.mktemp("metrics")) as start:
        yield Projects(start(module_db_url, keys=project_keys(), wait_for=2,
                             env={"SOUNDING__RECEIVERS__OTLP_HTTP__ENABLED": "true"}))


def assert_performance(server: Server, total: int = 100, errors: int = 10) -> None:
    now = int(time.time())
    store = Store(server.db_url)
    project = server.project_id()
    try:
        window = performance.window(store, project, now // 60 * 60 - 3600, now + 3600,
                                    "shop")
        routes = {r.route: (r.count, r.error_count)
                  for r in performance.routes(store, project, now - 3600, now + 3600)}
    finally:
        store.dispose()
    assert (window.count, window.error_count) == (total, errors)
    assert routes == {"/cart": (70, 0), "/pay": (30, 10)}
    # p95 is a 0.3 s request: its bucket is (0.25, 0.5].
    assert window.p95_ms is not None and 250 < window.p95_ms <= 500, window
    # p50 is a 0.02-0.04 s request: buckets (0.01, 0.025] and (0.025, 0.05].
    assert window.p50_ms is not None and 10 < window.p50_ms <= 50, window


@pytest.mark.parametrize("otel", [
    {},  # the SDK's default: cumulative
    {"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "delta"},
    {"OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION":
     "base2_exponential_bucket_histogram"},
], ids=["cumulative", "delta", "exponential"])
def test_sdk_durations_feed_performance_exactly(projects: Projects,
                                                otel: dict[str, str]) -> None:
    server = projects.take()
    with sdk_app(server.urls[1], server.key, **otel) as app:
        for requests in INTERVALS:
            app.export(requests)
        app.export([])  # an interval with nothing new: a cumulative SDK sends it all again
    assert_performance(server)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_collector_restart_between_exports_neither_double_counts_nor_loses(
        start: Callable[..., Server], sqlite_url: str) -> None:
    port = str(_free_port())
    env = {"SOUNDING_HTTP_PORT": port}
    server = start(sqlite_url, env=env)
    with sdk_app(server.base + "/ingest", server.key) as app:
        app.export(INTERVALS[0])
        assert server.stop() == 0, server.log()
        server = start(sqlite_url, env=env)  # same file, same port
        app.export(INTERVALS[1])
        app.export(INTERVALS[2])
    assert_performance(server)


# Issue 23: 30 requests at 30 ms and 7 at 300 ms over several exports. p95 (rank 36
# of 37) is a 300 ms request, in the (0.25, 0.5] s bucket; p50 a 30 ms one, in
# (0.025, 0.05]. Cumulative points after the first became deltas without a min and
# max, so their counts went to each bucket's upper bound: p95 read 500 ms, 517 ms
# from the hourly rollups, where delta temporality read 300 ms.
SLOW_TAIL = [
    [[0.03, 200, "/cart"]] * 20,
    [[0.03, 200, "/cart"]] * 10 + [[0.3, 200, "/cart"]] * 7,
    [],
]
# The same with one 2 s request among the slow ones (p95 is still rank 37 of 38, a
# 300 ms one): its interval's max, and a cumulative max from then on, is 2 s and
# keeps no bucket's counts down. Counts at a bucket's upper bound read up to 1% past
# it from the minutes and 5% from the hours: 517 ms for (0.25, 0.5], 51.9 ms for
# (0.025, 0.05], with either temporality.
OUTLIER = [SLOW_TAIL[0], [*SLOW_TAIL[1], [2.0, 200, "/cart"]], []]


def _quantiles(server: Server) -> dict[str, tuple[int, float | None, float | None]]:
    """(count, p50, p95) in ms, for service shop, as each read of the latency
    rollups gives them, over a short range (per-minute rollups, fine buckets) and a
    long one (hourly rollups, coarse buckets): the performance API's window, route
    table and graph, the alert evaluators' window_by_service, and the metrics API,
    which reads the stored points' own buckets."""
    now = int(time.time())
    hour = now // 3600 * 3600
    ranges = {"minutes": (now // 60 * 60 - 3600, now // 60 * 60 + 120),
              "hours": (hour - 7 * 3600, hour + 3600)}
    out: dict[str, tuple[int, float | None, float | None]] = {}
    store = Store(server.db_url)
    project = server.project_id()
    try:
        for name, (start_s, end_s) in ranges.items():
            w = performance.window(store, project, start_s, end_s, "shop")
            out[f"window {name}"] = (w.count, w.p50_ms, w.p95_ms)
            (route,) = performance.routes(store, project, start_s, end_s, "shop")
            out[f"routes {name}"] = (route.count, None, route.p95_ms)
            step = end_s - start_s if name == "minutes" else 3600
            s = performance.series(store, project, start_s, end_s, step, "shop")
            (i,) = [i for i, c in enumerate(s.count) if c]
            out[f"series {name}"] = (s.count[i], s.p50_ms[i], s.p95_ms[i])
            a = performance.window_by_service(store, project, start_s, end_s)["shop"]
            out[f"alerts {name}"] = (a.count, a.p50_ms, a.p95_ms)
        start_s, end_s = ranges["minutes"]
        read = {}
        for agg in ("count", "p50", "p95"):
            data = metric_series.metric_data(store, project, metric_series.Query(
                "http.server.request.duration", start_s * 10**9, end_s * 10**9,
                end_s - start_s, agg))
            assert data is not None
            (group,) = data.groups
            read[agg] = next(v for v in group.values if v is not None)
        out["metrics api"] = (int(read["count"]), read["p50"] * 1000, read["p95"] * 1000)
    finally:
        store.dispose()
    return out


def assert_slow_tail(server: Server, total: int) -> None:
    quantiles = _quantiles(server)
    for read, (count, p50, p95) in quantiles.items():
        assert count == total, (read, quantiles)
        assert p50 is None or 25 < p50 <= 50, (read, quantiles)
        assert p95 is not None and 250 < p95 <= 500, (read, quantiles)


def _otel(protocol: str, server: Server) -> tuple[str, dict[str, str]]:
    """(endpoint, OTEL_* settings) for the SDK's exporter over `protocol`."""
    if protocol == "grpc":
        return f"http://{server.grpc_target}", {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                                                "OTEL_EXPORTER_OTLP_INSECURE": "true"}
    return server.urls[1], {}


@pytest.mark.parametrize("temporality", ["cumulative", "delta"])
@pytest.mark.parametrize(("protocol", "recording"), [
    ("http", SLOW_TAIL), ("grpc", SLOW_TAIL), ("http", OUTLIER)],
    ids=["http", "grpc", "http-outlier"])
def test_a_slow_tail_reads_in_its_bucket(projects: Projects, protocol: str,
                                         recording: list[list[Any]], temporality: str
                                         ) -> None:
    server = projects.take()
    endpoint, otel = _otel(protocol, server)
    otel["OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"] = temporality
    with sdk_app(endpoint, server.key, **otel) as app:
        for requests in recording:
            app.export(requests)
    assert_slow_tail(server, sum(map(len, recording)))
