"""Which service a caller's peer is: pairing a client or producer span with its
child server or consumer span of another service, across batches.

The edge of a call is counted from the caller's span, under the peer the span names
(an address, a destination: model/operations.py), the moment it is stored; it never
waits for its child. When both halves of one call reach this writer, one way round
or the other, the peer is recorded as that service in `peer_aliases` (per caller
and peer), and the service map reads every edge to that peer as an edge to the
service: all of its calls, those counted before the pairing and those whose child
was never seen, so the counts are right after one call of each edge is paired.

Bounded: the halves not yet paired are kept, per role, in two generations of at most
`RECENT` entries each; when the newer is full it becomes the older and the older is
forgotten (a call whose halves arrive more than that many unpaired halves apart pairs on
a later call, or not at all: its peer stays a node of its own). Generations rather than
evicting the oldest entry one by one: a dictionary's oldest entry is found by walking
past every slot deleted before it, which grows with the churn. The aliases written are
remembered so that each is upserted once per process, not once per call. A restart
forgets the halves, never the aliases. Several collectors writing one database pair only
the calls whose halves reach the same writer (a serve group's workers share the
leader's).

The alternatives weighed: looking the parent span up in the spans table costs a
query per commit and finds nothing when the child arrives first (a callee's span
ends, and is often exported, before its caller's); waiting for the child before
counting the edge needs timers and loses counts at a restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storage import rows
from storage.rows import WireBatch
from storage.writer.copy import copy_types, upsert_rows

RECENT = 50_000  # per generation
_COLUMNS = rows.PEER_ALIAS.column_names
_TYPES = copy_types(rows.PEER_ALIAS, _COLUMNS)
_KEY = ", ".join(_COLUMNS[:4])
Alias = tuple[int, str, str, str]  # (project, caller service, peer type, peer)


class Recent:
    """Recent entries, at most 2 * `size`: two generations, looked up in both."""

    __slots__ = ("new", "old", "size")

    def __init__(self, size: int = RECENT) -> None:
        self.new: dict[Any, Any] = {}
        self.old: dict[Any, Any] = {}
        self.size = size

    def pop(self, key: Any) -> Any:
        found = self.new.pop(key, None)
        return self.old.pop(key, None) if found is None else found

    def put(self, key: Any, value: Any) -> None:
        if len(self.new) >= self.size:
            self.old, self.new = self.new, {}
        self.new[key] = value

    def __len__(self) -> int:
        return len(self.new) + len(self.old)


class PeerMatcher:
    def __init__(self, size: int = RECENT) -> None:
        # (project, trace id, span id) -> (caller service, peer type, peer)
        self._callers = Recent(size)
        # (project, trace id, parent span id) -> callee service
        self._callees = Recent(size)
        self._known: dict[Alias, str] = {}
        self._pending: dict[Alias, str] = {}

    def write(self, cursor: Any, dialect: str, batches: Sequence[WireBatch],
              received_us: int) -> None:
        self._pending.clear()  # what a rolled-back write upserted
        found: dict[Alias, str] = {}
        callers, callees = self._callers, self._callees
        for batch in batches:
            project_id = batch.project_id
            for trace_id, span_id, role, service, peer_type, peer in batch.links:
                half = (project_id, trace_id, span_id)
                if role == rows.CALLER:
                    callee = callees.pop(half)
                    if callee is None:
                        callers.put(half, (service, peer_type, peer))
                        continue
                    caller = (service, peer_type, peer)
                else:
                    caller_or_none = callers.pop(half)
                    if caller_or_none is None:
                        callees.put(half, service)
                        continue
                    caller, callee = caller_or_none, service
                if caller[0] != callee:
                    found[(project_id, *caller)] = callee
        new = {alias: callee for alias, callee in found.items()
               if self._known.get(alias) != callee}
        if not new:
            return
        upsert_rows(cursor, dialect, rows.PEER_ALIASES, _COLUMNS, _TYPES,
                    f"ON CONFLICT ({_KEY}) DO UPDATE SET callee = excluded.callee, "
                    "seen_us = excluded.seen_us",
                    [(*alias, callee, received_us) for alias, callee in sorted(new.items())])
        self._pending.update(new)

    def committed(self) -> None:
        self._known.update(self._pending)
        self._pending.clear()
        if len(self._known) > RECENT:
            self._known.clear()  # upserted again when next seen: harmless

