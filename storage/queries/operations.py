"""The service map and the operations of a service, read from the rollups written at
ingest (storage/writer/operations.py, storage/writer/peers.py), never from the spans:
their cost follows the range and the number of operations and edges, not the
number of spans stored.

- HTTP server operations are the request rollups, read as the performance page reads
  them (storage/queries/rollup_reads.py): per service, its duration metrics' rollups
  when it has any in the range, its spans' and requests' otherwise, so that no
  request counts twice. Every other operation is the operation rollups'.
- A service node's requests are its HTTP server requests and its other server and
  consumer operations (a service that neither serves nor calls a peer is no node); an
  edge's are the caller's client, producer and database spans to that peer, as the
  caller measured them. A peer that the writer learned is a
  service (`peer_aliases`) is drawn as that service; the others are nodes of their own
  (databases, messaging destinations, external hosts), with what their callers sent.

Long ranges read whole hours from the hourly rollups, the rest per minute, as
performance does (rollup_reads.plan_for). The operation and edge rollups hold coarse
latency buckets (processors/operations.py), so every quantile here is within 5%
(histogram.COARSE_ACCURACY): the request rollups' fine buckets are coarsened to be
merged with them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import Connection, Table, select

from model import histogram
from model.operations import CONSUMER, DATABASE, PEER_SERVICE, SERVER
from storage import schema
from storage.queries import rollup_reads as reads
from storage.store import Store

HTTP = "http"  # the kind of the request rollups' operations: `METHOD route`
SORTS = ("slowest", "failing", "busiest")
MAX_OPERATIONS = 500

_TABLES = {"operations": (schema.operation_rollups, schema.operation_rollups_hourly),
           "edges": (schema.edge_rollups, schema.edge_rollups_hourly)}


@dataclass(frozen=True)
class Stats:
    count: int
    error_count: int
    rate_rpm: float  # per minute over the range
    error_rate: float | None
    avg_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None


@dataclass(frozen=True)
class Operation:
    kind: str  # http, or one of model/operations.py's KINDS
    peer: str
    name: str
    stats: Stats
    # The latency distribution: [upper bound in ms, count] per bucket, fine or coarse.
    distribution: list[tuple[float, int]] = field(default_factory=list)


@dataclass(frozen=True)
class Node:
    id: str  # "service:<name>" or "<peer type>:<peer>"
    kind: str  # "service", or the peer's type (database, messaging, http, host, "")
    name: str
    stats: Stats | None  # None: a service that only calls (no server spans in the range)


@dataclass(frozen=True)
class Edge:
    source: str  # node ids
    target: str
    peers: list[tuple[str, str]]  # the (peer type, peer) the callers named
    stats: Stats


@dataclass(frozen=True)
class ServiceMap:
    nodes: list[Node]
    edges: list[Edge]
    quantile_accuracy: float


Totals = list[Any]  # [count, error count, duration sum in ms, {bucket: count}]


def _add(into: dict[Any, Totals], key: Any, c: int, e: int, d: float,
         hist: dict[int, int]) -> None:
    agg = into.get(key)
    if agg is None:
        into[key] = [c, e, d, dict(hist)]
        return
    agg[0] += c
    agg[1] += e
    agg[2] += d
    merged = agg[3]
    for b, n in hist.items():
        merged[b] = merged.get(b, 0) + n


ACCURACY = histogram.COARSE_ACCURACY


def _quantile(hist: dict[int, int], q: float) -> float | None:
    return histogram.quantile(hist, q, histogram.coarse_value)


def _stats(plan: reads.Plan, minutes: float, totals: Totals) -> Stats:
    c, e, d, hist = totals
    return Stats(c, e, c / minutes if minutes else 0.0, e / c if c else None,
                 d / c if c else None, _quantile(hist, 0.50), _quantile(hist, 0.95),
                 _quantile(hist, 0.99))


def _read(conn: Connection, plan: reads.Plan, which: str, project_id: int,
          group: tuple[str, ...], kinds: tuple[str, ...] = (), **match: str | None
          ) -> dict[tuple[Any, ...], Totals]:
    """Totals and latency histograms per `group` over the plan's range, from the
    operation or edge rollups (`which`), of the operations of `kinds` (all: ())."""
    minutes_t, hours_t = _TABLES[which]
    out: dict[tuple[Any, ...], Totals] = {}
    for piece in plan.pieces:
        hourly = piece.level.time == "hour"
        table: Table = hours_t if hourly else minutes_t
        time = table.c["hour" if hourly else "minute"]
        query = (select(*(table.c[g] for g in group), table.c["count"], table.c.error_count,
                        table.c.duration_sum_ms, table.c.buckets)
                 .where(table.c.project_id == project_id, time >= piece.start_s,
                        time < piece.end_s))
        for column, value in match.items():
            if value is not None:
                query = query.where(table.c[column] == value)
        if kinds:
            query = query.where(table.c.kind.in_(kinds))
        for row in conn.execute(query):
            hist = {int(b): n for b, n in orjson.loads(row.buckets).items()}
            _add(out, tuple(row[:len(group)]), int(row[-4]), int(row[-3]), float(row[-2]),
                 hist)
    return out


def _http(conn: Connection, store: Store, plan: reads.Plan, project_id: int,
          group: tuple[str, ...], **match: str | None) -> dict[tuple[Any, ...], Totals]:
    """The request rollups per `group`, by performance's rule (rollup_reads.read)."""
    totals, hists = reads.read(conn, store, plan, project_id, match, group, 0, reads.HOUR)
    out: dict[tuple[Any, ...], Totals] = {}
    for block, (c, e, d) in totals.items():
        hist = hists.get(block, {})
        _add(out, block[:-1], c, e, d, hist if plan.coarse else histogram.coarsen(hist))
    return out


def _distribution(plan: reads.Plan, hist: dict[int, int]) -> list[tuple[float, int]]:
    return [(histogram.coarse_value(b), hist[b]) for b in sorted(hist)]


def operations(store: Store, project_id: int, start_s: int, end_s: int, service: str,
               env: str | None = None, sort: str = "slowest",
               limit: int = MAX_OPERATIONS) -> list[Operation]:
    """Every operation of `service` in the range: its HTTP routes and its other
    operations, slowest (p95), most failing (error rate) or busiest first."""
    plan = reads.plan_for(start_s, end_s, hours=True)
    minutes = (end_s - start_s) / 60
    with store.reader.connect() as conn:
        http = _http(conn, store, plan, project_id, ("method", "route"), service=service,
                     env=env)
        other = _read(conn, plan, "operations", project_id, ("kind", "peer", "operation"),
                      service=service, env=env)
    found = [Operation(HTTP, "", f"{method} {route}", _stats(plan, minutes, t),
                       _distribution(plan, t[3]))
             for (method, route), t in http.items() if t[0]]
    found += [Operation(kind, peer, name, _stats(plan, minutes, t), _distribution(plan, t[3]))
              for (kind, peer, name), t in other.items() if t[0]]
    return sorted(found, key=_SORT_KEYS[sort])[:limit]


_SORT_KEYS = {
    "slowest": lambda o: (-(o.stats.p95_ms or 0), -(o.stats.error_rate or 0), o.name),
    "failing": lambda o: (-(o.stats.error_rate or 0), -o.stats.error_count,
                          -(o.stats.p95_ms or 0), o.name),
    "busiest": lambda o: (-o.stats.count, o.name),
}


def services(store: Store, project_id: int, start_s: int, end_s: int) -> list[str]:
    """The services with any operation, request or call in the range, by name."""
    found = {n.name for n in service_map(store, project_id, start_s, end_s).nodes
             if n.kind == "service"}
    plan = reads.plan_for(start_s, end_s, hours=True)
    with store.reader.connect() as conn:
        for piece in plan.pieces:
            hourly = piece.level.time == "hour"
            table = _TABLES["operations"][1 if hourly else 0]
            time = table.c["hour" if hourly else "minute"]
            found.update(conn.execute(
                select(table.c.service).distinct().where(
                    table.c.project_id == project_id, time >= piece.start_s,
                    time < piece.end_s)).scalars())
    return sorted(found)


def _aliases(conn: Connection, project_id: int) -> dict[tuple[str, str, str], str]:
    t = schema.peer_aliases
    return {(r.service, r.peer_type, r.peer): r.callee for r in conn.execute(
        select(t.c.service, t.c.peer_type, t.c.peer, t.c.callee)
        .where(t.c.project_id == project_id))}


def service_id(name: str) -> str:
    return f"service:{name}"


def peer_id(peer_type: str, peer: str) -> str:
    return f"{peer_type or 'unknown'}:{peer}"


def service_map(store: Store, project_id: int, start_s: int, end_s: int,
                env: str | None = None) -> ServiceMap:
    plan = reads.plan_for(start_s, end_s, hours=True)
    minutes = (end_s - start_s) / 60
    with store.reader.connect() as conn:
        http = _http(conn, store, plan, project_id, ("service",), env=env)
        # Only what a node serves: its calls are the edges'.
        ops = _read(conn, plan, "operations", project_id, ("service",), (SERVER, CONSUMER),
                    env=env)
        calls = _read(conn, plan, "edges", project_id, ("service", "peer_type", "peer"),
                      env=env)
        aliases = _aliases(conn, project_id)
    served: dict[str, Totals] = {}
    services: set[str] = set()
    for (service,), t in http.items():
        services.add(service)
        _add(served, service, *t)
    for (service,), t in ops.items():
        services.add(service)
        _add(served, service, *t)
    edges: dict[tuple[str, str], Totals] = {}
    named: dict[tuple[str, str], list[tuple[str, str]]] = {}
    peers: dict[str, tuple[str, str]] = {}
    into_peers: dict[str, Totals] = {}
    for (service, peer_type, peer), t in calls.items():
        services.add(service)
        callee = peer if peer_type == PEER_SERVICE else aliases.get(
            (service, peer_type, peer))
        if callee is not None:
            services.add(callee)
            target = service_id(callee)
        else:
            target = peer_id(peer_type, peer)
            peers[target] = (peer_type, peer)
            _add(into_peers, target, *t)
        key = (service_id(service), target)
        _add(edges, key, *t)
        named.setdefault(key, []).append((peer_type, peer))
    nodes = [Node(service_id(s), "service", s,
                  _stats(plan, minutes, served[s]) if s in served else None)
             for s in sorted(services)]
    nodes += [Node(node_id, peer_type or "unknown", peer,
                   _stats(plan, minutes, into_peers[node_id]))
              for node_id, (peer_type, peer) in sorted(peers.items())]
    return ServiceMap(nodes, [Edge(s, t, sorted(named[(s, t)]), _stats(plan, minutes, tot))
                              for (s, t), tot in sorted(edges.items())], ACCURACY)


def trace_filter(peer_type: str, peer: str) -> dict[str, str]:
    """The trace search's `q` (storage/queries/trace_terms.py) that finds a caller's
    spans to a peer, where one attribute names it: a database by its system, a
    messaging destination by its name, a service by `peer.service`. HTTP and other
    hosts have none that every instrumentation sets, so their traces are found by
    the caller alone."""
    if peer_type == PEER_SERVICE:
        return {"q": f'peer.service="{peer}"'}
    if peer_type == DATABASE:
        return {"q": f'db.system="{peer.split(" ", 1)[0]}"'}
    if peer_type == "messaging" and " " in peer:
        return {"q": f'messaging.destination.name="{peer.split(" ", 1)[1]}"'}
    return {}

