"""The resources of one batch, for its wire form: a resource (service.name and the
rest) is shared by every span, log record and metric point a process sends, so it is
serialised and hashed once per batch (its id, storage/spanbody.py's `resource_id`)
and its row made once; the rows that carry it keep only the id."""

from __future__ import annotations

from typing import Any

from storage import rows
from storage.jsontext import dumps
from storage.rows import Row
from storage.spanbody import resource_id


class ResourceRows:
    """Keyed by the identity of the attributes dict: the decoders give every record of
    one resource the same dict. Callers look in `ids` first (a dict lookup, on the hot
    path of every record) and call `add` only for a resource not seen yet."""

    __slots__ = ("project_id", "ids", "rows")

    def __init__(self, project_id: int) -> None:
        self.project_id = project_id
        self.ids: dict[int, int] = {}
        self.rows: list[Row] = []

    def add(self, attributes: dict[str, Any]) -> int:
        text = dumps(attributes)
        resource = self.ids[id(attributes)] = resource_id(self.project_id, text)
        self.rows.append(rows.RESOURCES.row(id=resource, attributes=text))
        return resource
