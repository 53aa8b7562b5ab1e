"""Every dashboard page and read-API route as a browser or a script gets it: GET over
HTTP from the real server (`sounding serve` on the bench database), so the time is
the handler's whole work: login check, project lookup, every query, the template.
Targets (issue 15): a page under 200 ms, a read-API answer under 100 ms.

The ranges are pinned to the end of the bench data (`range=custom&from=…&to=…`, the
same steps as the presets), so a run an hour after the fill reads the same spans.
"""

from __future__ import annotations

import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import requests

from bench.dashboard_fill import CRON_SLUG, RELEASES, ROUTES
from bench.server import BenchServer

ADMIN_TOKEN = "bench-admin-token-0123456789abcdef"
PAGE_MS, API_MS = 200, 100
EMPTY_PROJECT = "empty"  # a project with no data: the onboarding page


def _range(end_us: int, seconds: int) -> dict[str, str]:
    end_s = end_us // 1_000_000 + 1

    def iso(s: int) -> str:
        return f"{datetime.fromtimestamp(s, UTC):%Y-%m-%dT%H:%M:%S}Z"

    return {"range": "custom", "from": iso(end_s - seconds), "to": iso(end_s)}


def urls(meta: dict[str, Any], group: int, record: str) -> list[tuple[str, str, str]]:
    """(kind, name, path and query) of every case; kind is "page" or "api"."""
    end = meta["end_us"]
    hour, day, week = (_range(end, s) for s in (3600, 86_400, 7 * 86_400))
    p, a = "/projects/bench", "/api/v1/projects/bench"
    trace = meta["trace_id"]

    def q(path: str, *args: dict[str, Any]) -> str:
        merged = {k: v for d in args for k, v in d.items()}
        return f"{path}?{urlencode(merged, doseq=True)}" if merged else path

    traces: list[tuple[str, dict[str, Any]]] = [
        ("last hour", hour), ("24 h", day), ("7 days", week),
        ("7 days, status error", {**week, "status": "error"}),
        ("24 h, name 'checkout', >= 100 ms", {**day, "name": "checkout", "min_ms": 100}),
        ("24 h, duration>250ms", {**day, "q": "duration>250ms"}),
        (f"24 h, http.route={ROUTES[1]}", {**day, "q": f"http.route={ROUTES[1]}"}),
        ("7 days, http.response.status_code=500",
         {**week, "q": "http.response.status_code=500"}),
    ]
    return [
        ("page", "home (redirects to the error list)", "/"),
        ("page", "error list", q(f"{p}/errors")),
        ("page", "error list, most frequent", q(f"{p}/errors", {"sort": "count"})),
        ("page", "error list, environment=staging",
         q(f"{p}/errors", {"environment": "staging"})),
        ("page", f"error list, release={RELEASES[3]}, production",
         q(f"{p}/errors", {"release": RELEASES[3], "environment": "production"})),
        ("page", "error list, search 'value 4'", q(f"{p}/errors", {"q": "value 4"})),
        ("page", "error list, resolved", q(f"{p}/errors", {"status": "resolved"})),
        ("page", "error group (busiest, 7 days)", q(f"{p}/errors/{group}", week)),
        *[("page", f"traces, {n}", q(f"{p}/traces", args)) for n, args in traces],
        ("page", "traces, 7 days, page 20", q(f"{p}/traces", week, {"page": 20})),
        ("page", "one trace (10 spans)", f"{p}/traces/{trace}"),
        ("page", "performance, 1 h", q(f"{p}/performance", hour)),
        ("page", "service map, 1 h", q(f"{p}/service-map", hour)),
        ("page", "service map, 24 h", q(f"{p}/service-map", day)),
        ("page", "operations, 1 h", q(f"{p}/operations", hour, {"service": "shop"})),
        ("page", "operations, 24 h", q(f"{p}/operations", day, {"service": "shop"})),
        ("page", "performance, 24 h", q(f"{p}/performance", day)),
        ("page", "performance, 7 days", q(f"{p}/performance", week)),
        ("page", f"performance, 7 days, route {ROUTES[0]}",
         q(f"{p}/performance", week, {"method": "GET", "route": ROUTES[0]})),
        ("page", "deploys, 7 days", q(f"{p}/deploys", week)),
        ("page", "releases, 7 days", q(f"{p}/releases", week)),
        ("page", f"release {RELEASES[0]}, 7 days", q(f"{p}/releases/{quote(RELEASES[0])}", week)),
        ("page", "feedback", f"{p}/feedback"),
        ("page", "stats, 24 h", f"{p}/stats"),
        ("page", "stats, 30 days", q(f"{p}/stats", {"hours": 720})),
        ("api", "usage, 30 days", q(f"{a}/usage", {"hours": 720})),
        ("api", "limits", f"{a}/limits"),
        ("page", "logs, last hour", q(f"{p}/logs", hour)),
        ("page", "logs, 24 h, text 'user 42'", q(f"{p}/logs", day, {"text": "user 42"})),
        ("page", "logs, 7 days, severity error", q(f"{p}/logs", week, {"severity": "error"})),
        ("page", f"logs, 7 days, attr http.route={ROUTES[1]}",
         q(f"{p}/logs", week, {"attr": f"http.route={ROUTES[1]}"})),
        ("page", "metrics (names)", f"{p}/metrics"),
        ("page", "metrics, cpu by cpu, 7 days", q(f"{p}/metrics", week, {
            "metric": "system.cpu.utilization", "group_by": "cpu"})),
        ("page", "crons", f"{p}/crons"),
        ("page", "cron monitor, 7 days", q(f"{p}/crons/{CRON_SLUG}", week)),
        ("page", "alerts", f"{p}/alerts"),
        ("page", "setup", f"{p}/setup"),
        ("page", "policy (scrubbing, filters)", f"{p}/policy"),
        ("page", "onboarding (a project without data)", f"/projects/{EMPTY_PROJECT}/errors"),
        ("page", "users", "/users"),
        ("page", "account", "/account"),
        ("page", "tokens", "/tokens"),
        ("page", "audit log", "/audit"),
        ("page", "audit log, project bench, group actions",
         q("/audit", {"project": "bench", "action": "group"})),
        ("api", "projects", "/api/v1/projects"),
        ("api", "audit log", "/api/v1/audit"),
        ("api", "policy", f"{a}/policy"),
        ("api", "error groups", f"{a}/error-groups"),
        ("api", "error groups, environment=staging",
         q(f"{a}/error-groups", {"environment": "staging"})),
        ("api", "error group (busiest, 7 days)", q(f"{a}/error-groups/{group}", week)),
        ("api", f"release {RELEASES[0]}", f"{a}/releases/{quote(RELEASES[0])}"),
        ("api", "deploys, 7 days", q(f"{a}/deploys", week)),
        ("api", "releases, 7 days", q(f"{a}/releases", week)),
        ("api", "feedback", f"{a}/feedback"),
        ("api", "performance, 24 h", q(f"{a}/performance", day)),
        ("api", "service map, 24 h", q(f"{a}/service-map", day)),
        ("api", "operations, 24 h", q(f"{a}/operations", day, {"service": "shop"})),
        ("api", "performance, 7 days", q(f"{a}/performance", week)),
        *[("api", f"traces, {n}", q(f"{a}/traces", args)) for n, args in traces],
        ("api", "traces, 7 days, offset 950", q(f"{a}/traces", week, {"offset": 950})),
        ("api", "one trace", f"{a}/traces/{trace}"),
        ("api", "logs, 24 h", q(f"{a}/logs", day)),
        ("api", "logs, 7 days, severity error", q(f"{a}/logs", week, {"severity": "error"})),
        ("api", "one log record", f"{a}/logs/{record}"),
        ("api", "cron monitors", f"{a}/crons"),
        ("api", "cron monitor, 7 days", q(f"{a}/crons/{CRON_SLUG}", week)),
        ("api", "metrics (names)", f"{a}/metrics"),
        ("api", "metric, cpu by cpu, 24 h", q(f"{a}/metrics/system.cpu.utilization", day,
                                             {"group_by": "cpu"})),
    ]


def measure(db_url: str, meta: dict[str, Any], group: int, record: str, repeat: int,
            only: str | None) -> list[tuple[str, str, float, float, float, int]]:
    """(kind, name, first ms, median ms, max ms, status) of every case."""
    repo = str(Path(__file__).resolve().parents[1])
    server = BenchServer(db_url, {"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN, "PYTHONPATH": repo})
    host, port = server.http or ("127.0.0.1", 0)
    base = f"http://{host}:{port}"
    rows = []
    try:
        with requests.Session() as session:
            session.headers["Authorization"] = f"Bearer {ADMIN_TOKEN}"
            for kind, name, path in urls(meta, group, record):
                if only and only not in name:
                    continue
                samples, status = [], 0
                for _ in range(repeat + 1):
                    started = time.perf_counter()
                    response = session.get(base + path, allow_redirects=False, timeout=60)
                    samples.append((time.perf_counter() - started) * 1000)
                    status = response.status_code
                rows.append((kind, name, samples[0], statistics.median(samples[1:]),
                             max(samples[1:]), status))
    finally:
        server.stop()
        server.cleanup()
    return rows


def table(rows: list[tuple[str, str, float, float, float, int]]) -> list[str]:
    out = ["| page or API call | target ms | first ms | median ms | max ms | status |",
           "|---|---:|---:|---:|---:|---:|"]
    for kind, name, first, median, worst, status in rows:
        target = PAGE_MS if kind == "page" else API_MS
        flag = "" if median < target else " **over**"
        out.append(f"| {kind}: {name} | {target} | {first:.0f} | {median:.1f}{flag} | "
                   f"{worst:.1f} | {status} |")
    return out
