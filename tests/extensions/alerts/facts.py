"""Facts as the store hands them to the message builder (storage.alerts.outbox.Fact's
fields), for the message and destination tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from extensions.alerts.message import Alert, alert_from

AT_US = 1_767_323_045_000_006  # 2026-01-02T03:04:05.000006Z
PUBLIC_URL = "https://sounding.example.com/"


@dataclass(frozen=True)
class Fact:
    project_id: int
    kind: str
    subject: str
    dedupe_key: str
    at_us: int
    details: dict[str, Any] = field(default_factory=dict)


def new_group(fp: str = "f" * 32, project_id: int = 1, **details: Any) -> Fact:
    base = {"group_id": 12, "exception_class": "KeyError", "message": "'sku'",
            "environment": "production", "service": "checkout", "release": "1.4.2"}
    return Fact(project_id, "new_group", fp, f"new_group:{fp}", AT_US, {**base, **details})


def alert(fact: Fact | None = None, project: str = "shop",
          public_url: str | None = PUBLIC_URL) -> Alert:
    return alert_from(fact or new_group(), project, public_url)


def alerts(n: int, project: str = "shop") -> list[Alert]:
    return [alert(new_group(f"{i:032x}", message=f"missing key number {i}"), project)
            for i in range(n)]
