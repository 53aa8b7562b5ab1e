"""The Sentry door: `POST /api/<project id>/envelope/` and the legacy
`POST /api/<project id>/store/` on the ingest port, for Sentry's SDKs pointed at
Sounding by their DSN alone (README.md, "From Sentry").

It is the ingest handler (receiver/handlers.py: admission before the body, the
bounded streaming body, the in-flight count, CORS) with Sentry's rules where
they differ: the key comes from Sentry's auth header, the query or the envelope's
DSN and must belong to the project in the URL; any Content-Type is read (SDKs send
application/x-sentry-envelope, application/json, and text/plain from browsers,
whose requests must stay "simple" to skip a preflight); the answer is 200
`{"id": ...}` once the records are committed, and errors take Sentry's forms
(receiver/status.py, `sentry_http_error`).

It is its own route, not a row of receiver/signals/table.py: its path carries the
project, its authentication and its answers are Sentry's, and it has no gRPC door.
"""

from __future__ import annotations

from typing import Any

from receiver.context import ReceiverContext
from receiver.handlers import IngestHandler
from receiver.jsonbody import parse_json
from receiver.sentry.auth import key_from_dsn, project_for_sentry, request_key
from receiver.sentry.envelope import parse_envelope
from receiver.sentry.items import Decoded, decode_envelope, decode_store
from receiver.signals.outcome import Origin
from receiver.status import sentry_http_error
from sounding import metrics
from sounding.timeutil import now_us

# Project ids are database ids: 18 digits is beyond any, and keeps int() cheap.
PROJECT = r"/api/(\d{1,18})"


class SentryHandler(IngestHandler):
    accepted_status = 200
    cors_allow_headers = "X-Sentry-Auth, Content-Type, Content-Encoding"
    # A browser SDK reads these to back off (its rate limiter).
    cors_expose_headers = "Retry-After, X-Sentry-Rate-Limits"

    # Tornado calls initialize with the route's arguments: this route gives one more.
    def initialize(self, ctx: ReceiverContext, kind: str) -> None:  # type: ignore[override]
        self.kind = kind
        self.endpoint = f"sentry_{kind}"
        self._key_in_body = False
        super().initialize(ctx)

    def error_answer(self, exc: BaseException | None
                     ) -> tuple[int, dict[str, Any], dict[str, str]]:
        return sentry_http_error(exc)

    async def authenticate(self) -> None:
        headers = self.request.headers
        key = request_key(headers.get("X-Sentry-Auth"), headers.get("Authorization"),
                          self.get_query_argument("sentry_key", None))
        if key is None and self.kind == "envelope":
            # The envelope header's DSN, read once the body is in (`ingest`).
            self._key_in_body = True
            return
        self.project_id = await project_for_sentry(self.ctx.auth, key, self._url_project())

    def read_media_type(self, raw_type: str | None) -> str:
        return (raw_type or "").split(";", 1)[0].strip().lower()

    def _url_project(self) -> int:
        return int(self.path_args[0])

    async def ingest(self, body: bytes) -> None:
        if self.kind == "envelope":
            envelope = parse_envelope(body)
            if self._key_in_body:
                self.project_id = await project_for_sentry(
                    self.ctx.auth, key_from_dsn(envelope.headers.get("dsn")),
                    self._url_project())
            decoded = decode_envelope(envelope, now_us())
        else:
            decoded = decode_store(parse_json(body), now_us())
        await self._commit(decoded, len(body))
        for kind, count in decoded.items.items():
            metrics.SENTRY_ITEMS.labels(kind).inc(count)
        if decoded.dropped_spans:
            metrics.DROPPED.labels("spans", "invalid").inc(decoded.dropped_spans)
        self.set_status(200)
        self.write({"id": decoded.event_id})

    async def _commit(self, decoded: Decoded, size: int) -> None:
        if not decoded.errors and not decoded.spans:
            return  # only ignored items: nothing to commit
        batch = Origin(self.project_id, size, self.trace_link()).new_batch()
        batch.errors.extend(decoded.errors)
        batch.spans.extend(decoded.spans)
        await self.ctx.pipeline.consume(batch)


def sentry_routes(ctx: ReceiverContext) -> list[Any]:
    """The envelope and store endpoints, with or without their final slash."""
    return [(PROJECT + r"/envelope/?", SentryHandler, {"ctx": ctx, "kind": "envelope"}),
            (PROJECT + r"/store/?", SentryHandler, {"ctx": ctx, "kind": "store"})]
