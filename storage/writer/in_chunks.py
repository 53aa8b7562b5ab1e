"""Group keys of several projects cut into `IN (…)` lists a statement can take: the
writer's per-commit reads of the groups it touched (reopen, snooze, merged targets)
each ask per project, a chunk at a time."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

# SQLite has no parameter limit problem below this; PostgreSQL allows 65,535.
IN_CHUNK = 500


def by_project(keys: Iterable[tuple[int, str]], size: int = IN_CHUNK
               ) -> Iterator[tuple[int, list[str]]]:
    """(project id, up to `size` fingerprints), projects in ascending order (the
    same order on every collector) and fingerprints in the order given."""
    grouped: dict[int, list[str]] = {}
    for project_id, fingerprint in keys:
        grouped.setdefault(project_id, []).append(fingerprint)
    for project_id, fingerprints in sorted(grouped.items()):
        for start in range(0, len(fingerprints), size):
            yield project_id, fingerprints[start:start + size]
