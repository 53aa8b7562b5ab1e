"""What a bounded queue holds, counted in records and in bytes, and the rule every
queue of the collector keeps: the SQL exporter's requests waiting for the writer
(exporters/sql/exporter.py), the forward exporter's backlog in the outbox
(exporters/forward/exporter.py), and, counted in bytes alone, the bodies waiting for a
decode worker (runtime/offload.py) and those a receiver is reading (receiver/http/body.py).

The rule: a batch is taken while what is held plus the batch stays within both
bounds, and an empty queue always takes one batch, however large, so that a batch
bigger than a bound is not refused for ever. Requests are refused before they are
decoded (admission) once what is held has reached a bound.
"""

from __future__ import annotations


class QueueBound:
    __slots__ = ("max_records", "max_bytes", "records", "bytes")

    def __init__(self, max_records: int | None, max_bytes: int) -> None:
        """`max_records` None: records are not bounded (a queue of bytes)."""
        self.max_records = max_records
        self.max_bytes = max_bytes
        self.records = 0
        self.bytes = 0

    @property
    def full(self) -> bool:
        """At or past a bound: what admission refuses on."""
        return ((self.max_records is not None and self.records >= self.max_records)
                or self.bytes >= self.max_bytes)

    @property
    def over_half(self) -> bool:
        """More than half of either bound held: where a queue that overflowed may
        keep refusing until it has drained (the SQL exporter's hysteresis)."""
        return ((self.max_records is not None and self.records > self.max_records // 2)
                or self.bytes > self.max_bytes // 2)

    def takes(self, records: int, size: int) -> bool:
        """Whether a batch of `records` records and `size` bytes is taken now."""
        if not self.records and not self.bytes:
            return True
        return ((self.max_records is None or self.records + records <= self.max_records)
                and self.bytes + size <= self.max_bytes)

    def add(self, records: int, size: int) -> None:
        self.records += records
        self.bytes += size

    def remove(self, records: int, size: int) -> None:
        self.records = max(0, self.records - records)
        self.bytes = max(0, self.bytes - size)
