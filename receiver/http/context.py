"""What HTTP handlers are given through `initialize`: their dependencies."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from model.component import Authenticator, HealthCheck
from receiver.http.body import BodyBudget
from runtime.pipeline import Pipeline


@dataclass
class ReceiverContext:
    pipeline: Pipeline
    auth: Authenticator
    health: HealthCheck
    max_body_bytes: int
    cors_origins: list[str] = field(default_factory=list)
    # Bytes held by the bodies being read, across every connection (receiver/http/body.py).
    body_budget: BodyBudget = field(default_factory=lambda: BodyBudget(64 * 1024 * 1024))
    started: float = field(default_factory=time.monotonic)
    # Set when the collector stops: requests still arriving get 503, not a cut connection.
    closing: bool = False
    in_flight: int = 0
