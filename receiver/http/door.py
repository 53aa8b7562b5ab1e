"""The HTTP door of every signal: one Tornado handler, routed once per signal of
receiver/signals/table.py. The base (receiver/http/base.py) checks the request and
reads the body; this adds only the framing: the body into the signal's document,
and the signal's Outcome into the response."""

from __future__ import annotations

from typing import Any

from receiver.http.base import DoorHandler
from receiver.http.context import ReceiverContext
from receiver.signals.outcome import Origin
from receiver.signals.table import SIGNALS, Signal


class SignalHandler(DoorHandler):
    signal: Signal

    # Tornado calls initialize with the route's arguments: this route gives one more.
    def initialize(self, ctx: ReceiverContext, signal: Signal) -> None:  # type: ignore[override]
        self.signal = signal
        self.endpoint = signal.name
        self.content_types = signal.http.content_types
        self.limit_categories = signal.categories
        super().initialize(ctx)

    async def ingest(self, body: bytes) -> None:
        signal = self.signal
        document = signal.http.document(body, self.media_type)
        outcome = await signal.handle(self.ctx.pipeline,
                                      Origin(self.project_id, len(body), self.trace_link(),
                                             self.client_ip()),
                                      document)
        if outcome.batch is not None:
            self.set_status(202)
            self.write(outcome.batch.as_json())
        elif outcome.dropped and signal.http.partial is not None:
            self.set_status(202)
            self.set_header("Content-Type", self.media_type)
            self.write(signal.http.partial(outcome, self.media_type))


def signal_routes(ctx: ReceiverContext) -> list[Any]:
    """Every signal at its path under /ingest (the ingest port, 3000)."""
    return [(signal.http.path, SignalHandler, {"ctx": ctx, "signal": signal})
            for signal in SIGNALS]


def otlp_routes(ctx: ReceiverContext) -> list[Any]:
    """The OTLP signals at their standard paths (the OTLP/HTTP port, 4318), so that
    an SDK left at its default endpoint works."""
    return [(signal.http.otlp_path, SignalHandler, {"ctx": ctx, "signal": signal})
            for signal in SIGNALS if signal.http.otlp_path is not None]
