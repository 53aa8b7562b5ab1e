"""The Service map and Operations pages and their API (storage/queries/operations.py).

The map is SVG drawn on the server, no script needed: nodes in columns by how many
calls away from a service nothing calls (callers on the left, databases and external
hosts on the right), each node and edge a link to the traces behind it; the same
figures are in a table under it. Every value a client sent (service, peer and
operation names) reaches the page through the template, which escapes it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from tornado.web import HTTPError

from dashboard import format as fmt
from dashboard.api import ApiHandler
from dashboard.base import DashboardHandler
from storage.queries import operations as oq

NODE_W, NODE_H = 190, 46
COL_W, ROW_H = 300, 78
PAD = 20
LABEL_CHARS = 26


@dataclass(frozen=True)
class Box:
    node: oq.Node
    x: float
    y: float
    label: str  # shortened to fit; the full name is the box's title
    href: str
    operations_href: str | None  # a service's Operations page


@dataclass(frozen=True)
class Line:
    edge: oq.Edge
    x1: float
    y1: float
    x2: float
    y2: float
    label: str
    href: str


@dataclass(frozen=True)
class Drawing:
    boxes: list[Box]
    lines: list[Line]
    width: int
    height: int
    node_w: int = NODE_W
    node_h: int = NODE_H


def _columns(found: oq.ServiceMap) -> dict[str, int]:
    """Each node's column: the longest chain of calls leading to it (cycles cut at
    the number of nodes)."""
    column = {n.id: 0 for n in found.nodes}
    for _ in range(len(found.nodes)):
        changed = False
        for e in found.edges:
            if e.source != e.target and column[e.target] <= column[e.source] < len(column):
                column[e.target] = column[e.source] + 1
                changed = True
        if not changed:
            break
    return column


def _short(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else name[:LABEL_CHARS - 1] + "…"


def rate(stats: oq.Stats) -> str:
    per_min = stats.rate_rpm
    return (f"{per_min:.1f}/min" if per_min >= 0.1 else f"{stats.count} calls")


def draw(found: oq.ServiceMap, traces_url: Any, operations_url: Any) -> Drawing:
    """Where each node and edge goes. `traces_url(**filters)` and
    `operations_url(service)` make the links."""
    column = _columns(found)
    rows: dict[int, int] = {}
    boxes: dict[str, Box] = {}
    for node in sorted(found.nodes, key=lambda n: (column[n.id], n.kind != "service", n.name)):
        col = column[node.id]
        row = rows.get(col, 0)
        rows[col] = row + 1
        if node.kind == "service":
            href = traces_url(service=node.name)
            ops = operations_url(node.name)
        else:
            href = traces_url(**oq.trace_filter(node.kind, node.name))
            ops = None
        boxes[node.id] = Box(node, PAD + col * COL_W, PAD + row * ROW_H, _short(node.name),
                             href, ops)
    lines = []
    for e in found.edges:
        a, b = boxes[e.source], boxes[e.target]
        caller = e.source.split(":", 1)[1]
        peer_type, peer = e.peers[0]
        href = traces_url(service=caller, **oq.trace_filter(peer_type, peer))
        err = e.stats.error_rate or 0.0
        lines.append(Line(e, a.x + NODE_W, a.y + NODE_H / 2, b.x, b.y + NODE_H / 2,
                          f"{rate(e.stats)} · {err:.0%} err", href))
    width = PAD * 2 + (max(column.values(), default=0)) * COL_W + NODE_W
    height = PAD * 2 + max(rows.values(), default=1) * ROW_H
    return Drawing(list(boxes.values()), lines, width, height)


def _sort(handler: DashboardHandler) -> str:
    sort = handler.arg("sort") or "slowest"
    if sort not in oq.SORTS:
        raise HTTPError(400, f"sort must be one of {', '.join(oq.SORTS)}")
    return sort


class ServiceMapPage(DashboardHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        tr = await self.page_range("1h")
        env = self.arg("env")
        found = await self.run(oq.service_map, self.store, project.id, tr.start_s, tr.end_s,
                               env)
        params = tr.params()

        def traces_url(**filters: str) -> str:
            return self.project_url("traces", **params, **filters)

        def operations_url(service: str) -> str:
            return self.project_url("operations", service=service, env=env, **params)

        self.render("servicemap.html", found=found, env=env, tr=tr,
                    drawing=draw(found, traces_url, operations_url), rate=rate,
                    section="service-map")


class OperationsPage(DashboardHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        tr = await self.page_range("1h")
        env, sort = self.arg("env"), _sort(self)
        services = await self.run(oq.services, self.store, project.id, tr.start_s, tr.end_s)
        service = self.arg("service") or (services[0] if services else None)
        ops = [] if service is None else await self.run(
            oq.operations, self.store, project.id, tr.start_s, tr.end_s, service, env, sort)
        self.render("operations.html", services=services, service=service, env=env,
                    sort=sort, ops=ops, tr=tr, section="operations",
                    bars=distribution_bars,
                    accuracy=oq.ACCURACY)


def distribution_bars(op: oq.Operation, width: int = 160, height: int = 28
                      ) -> list[tuple[float, float, float, str]]:
    """A small histogram of an operation's latencies: (x, y, bar width, title) per
    bar, the buckets regrouped into at most 24 bars on a log scale."""
    if not op.distribution:
        return []
    lo, hi = op.distribution[0][0], op.distribution[-1][0]
    bins = 24
    counts = [0] * bins
    span = math.log(hi / lo) if hi > lo > 0 else 0.0
    for value, n in op.distribution:
        i = 0 if span == 0 else min(bins - 1, int(math.log(value / lo) / span * bins))
        counts[i] += n
    top = max(counts)
    bar = width / bins
    out = []
    for i, n in enumerate(counts):
        if n:
            h = max(1.0, height * n / top)
            edge = lo * math.exp(span * i / bins)
            out.append((round(i * bar, 2), round(height - h, 2), round(bar - 1, 2),
                        f"{n} from {fmt.duration_ms(edge)}"))
    return out


class ServiceMapApi(ApiHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        tr = self.time_range("1h")
        found = await self.run(oq.service_map, self.store, project.id, tr.start_s, tr.end_s,
                               self.arg("env"))
        self.write_json({"from": tr.start_s, "to": tr.end_s, **asdict(found)})


class OperationsApi(ApiHandler):
    async def get(self, project_name: str) -> None:
        project = await self.load_project(project_name)
        tr = self.time_range("1h")
        service = self.arg("service")
        if service is None:
            raise HTTPError(400, "'service' is required: the service whose operations to list")
        ops = await self.run(oq.operations, self.store, project.id, tr.start_s, tr.end_s,
                             service, self.arg("env"), _sort(self))
        self.write_json({"from": tr.start_s, "to": tr.end_s, "service": service,
                         "operations": [asdict(o) for o in ops]})


def routes(project: str, api: str, args: dict[str, Any]) -> list[Any]:
    return [(project + r"/service-map", ServiceMapPage, args),
            (project + r"/operations", OperationsPage, args),
            (api + r"/service-map", ServiceMapApi, args),
            (api + r"/operations", OperationsApi, args)]
