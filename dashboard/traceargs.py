"""The Traces page's and the traces API's query arguments, read once for both: a
value that cannot be read is a 400 naming its parameter.

- `service`: exact service name; `name`: a case-insensitive substring of a span's name;
- `status`: ok, error or unset; `min_ms`: a span lasting at least this many ms;
- `q`: terms (storage/queries/trace_terms.py): `key=value`, `key exists`, `duration>250ms`;
- `page` (the page, PAGE_SIZE traces) or, in the API, `limit` and `offset`;
- `range`, `from`, `to`: the time range (dashboard/timerange.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tornado.web import HTTPError

from dashboard.base import DashboardHandler
from storage.queries import trace_terms
from storage.queries.trace_terms import Term

PAGE_SIZE = 50
MAX_LIMIT = 500
MAX_OFFSET = 100_000


@dataclass(frozen=True)
class TraceArgs:
    service: str | None
    name: str | None
    min_ms: float | None
    status: str | None
    q: str | None
    terms: list[Term] = field(default_factory=list)

    def form(self) -> dict[str, Any]:
        """The filters as the URL carries them (the page's links keep them)."""
        return {"service": self.service, "name": self.name, "min_ms": self.min_ms,
                "status": self.status, "q": self.q}


def trace_args(handler: DashboardHandler) -> TraceArgs:
    status = handler.arg("status")
    if status is not None and status not in ("ok", "error", "unset"):
        raise HTTPError(400, "status must be one of ok, error, unset")
    q = handler.arg("q")
    try:
        terms = trace_terms.parse(q)
    except ValueError as exc:
        raise HTTPError(400, f"'q': {exc}") from exc
    # min_duration_ms is the API's older name of min_ms.
    min_ms = handler.float_arg("min_ms")
    if min_ms is None:
        min_ms = handler.float_arg("min_duration_ms")
    return TraceArgs(handler.arg("service"), handler.arg("name"), min_ms, status, q, terms)
