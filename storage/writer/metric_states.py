"""The conversion states a SQLite writer committed, kept in memory (storage/writer/
points.py reads the store only for the others)."""

from __future__ import annotations

from typing import Any

# Series keys (and states) remembered as committed; past this many the memory starts
# again empty.
MAX_KNOWN_SERIES = 200_000
StateKey = tuple[int, bytes]
State = tuple[int, int, Any]  # (start_ns, time_ns, cumulative values) or None


class StateCache:
    """The conversion states this writer committed to a SQLite file, valid while no
    other connection commits to it: at each transaction's start (the write lock held,
    so no one commits before this one does) PRAGMA data_version says whether another
    connection has committed since; if one has, or the connection is another, the
    states are read from the store again. States of a write not committed (rolled
    back) never reach it."""

    def __init__(self) -> None:
        self.states: dict[StateKey, State | None] = {}
        self.pending: dict[StateKey, State | None] = {}
        self.connection: Any = None
        self.version: int | None = None
        self.seen: int | None = None

    def take(self, cursor: Any, keys: list[StateKey], found: dict[StateKey, Any]
             ) -> list[StateKey]:
        """Known states put in `found`; the keys still to read from the store."""
        cursor.execute("PRAGMA data_version")
        self.seen = cursor.fetchone()[0]
        if cursor.connection is not self.connection or self.seen != self.version:
            self.states.clear()
            self.connection, self.version = cursor.connection, None
        states, missing = self.states, []
        for key in keys:
            if key in states:
                found[key] = states[key]
            else:
                missing.append(key)
        return missing

    def committed(self) -> None:
        if len(self.states) + len(self.pending) > MAX_KNOWN_SERIES:
            self.states.clear()
        self.states.update(self.pending)
        self.pending = {}
        if self.seen is not None:
            self.version = self.seen
