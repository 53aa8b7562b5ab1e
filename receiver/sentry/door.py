"""The Sentry door: `POST /api/<project id>/envelope/` and the legacy
`POST /api/<project id>/store/` on the ingest port, for Sentry's SDKs pointed at
Sounding by their DSN alone (docs/sentry.md).

It is the ingest handler (receiver/http/base.py: admission before the body, the
bounded streaming body, the in-flight count, CORS) with Sentry's rules where
they differ: the key comes from Sentry's auth header, the query or the envelope's
DSN and must belong to the project in the URL; any Content-Type is read (SDKs send
application/x-sentry-envelope, application/json, and text/plain from browsers,
whose requests must stay "simple" to skip a preflight); the answer is 200
`{"id": ...}` once the records are committed, and errors take Sentry's forms
(receiver/status.py, `sentry_http_error`). A large envelope is decoded in a decode
worker (`_offload`), a small one here.

It is its own route, not a row of receiver/signals/table.py: its path carries the
project, its authentication and its answers are Sentry's, and it has no gRPC door.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from model.errors import SoundingError
from model.timeutil import now_us
from receiver.http.base import DoorHandler
from receiver.http.context import ReceiverContext
from receiver.jsonbody import parse_json
from receiver.sentry.auth import key_from_dsn, project_for_sentry, request_key
from receiver.sentry.envelope import Envelope, parse_envelope
from receiver.sentry.items import (
    RECORD_TYPES,
    Decoded,
    decode_envelope,
    decode_envelope_body,
    decode_store,
    summary,
)
from receiver.signals.outcome import Origin
from receiver.status import sentry_http_error
from runtime import drops, telemetry

# Project ids are database ids: 18 digits is beyond any, and keeps int() cheap.
PROJECT = r"/api/(\d{1,18})"


class SentryHandler(DoorHandler):
    accepted_status = 200
    cors_allow_headers = "X-Sentry-Auth, Content-Type, Content-Encoding"
    # A browser SDK reads these to back off (its rate limiter).
    cors_expose_headers = "Retry-After, X-Sentry-Rate-Limits"

    # Tornado calls initialize with the route's arguments: this route gives one more.
    def initialize(self, ctx: ReceiverContext, kind: str) -> None:  # type: ignore[override]
        self.kind = kind
        self.endpoint = f"sentry_{kind}"
        self._key_in_body = False
        self._dsn_key: str | None = None  # the key of the envelope's DSN, once read
        super().initialize(ctx)

    def error_answer(self, exc: BaseException | None
                     ) -> tuple[int, dict[str, Any], dict[str, str]]:
        return sentry_http_error(exc)

    def presented_key(self) -> str | None:
        headers = self.request.headers
        try:
            key = request_key(headers.get("X-Sentry-Auth"), headers.get("Authorization"),
                              self.get_query_argument("sentry_key", None))
        except SoundingError:
            key = None
        return key if key is not None else self._dsn_key

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
                self._dsn_key = key_from_dsn(envelope.headers.get("dsn"))
                self.project_id = await project_for_sentry(
                    self.ctx.auth, self._dsn_key, self._url_project())
            pool = self.ctx.pipeline.decode_pool
            if pool is not None and pool.wants(len(body)) and _has_records(envelope):
                event_id, items = await self._offload(body, envelope)
            else:
                decoded = decode_envelope(envelope, now_us())
                await self._commit(decoded, len(body))
                event_id, items = decoded.event_id, decoded.items
        else:
            decoded = decode_store(parse_json(body), now_us())
            await self._commit(decoded, len(body))
            event_id, items = decoded.event_id, decoded.items
        for kind, count in items.items():
            telemetry.SENTRY_ITEMS.labels(kind).inc(count)
        self.set_status(200)
        self.write({"id": event_id})

    async def _commit(self, decoded: Decoded, size: int) -> None:
        drops.count({"spans": decoded.dropped}, drops.INVALID)
        if not decoded.errors and not decoded.spans:
            return  # only ignored items: nothing to commit
        batch = Origin(self.project_id, size, self.trace_link(), self.client_ip()).new_batch()
        batch.errors.extend(decoded.errors)
        batch.spans.extend(decoded.spans)
        await self.ctx.pipeline.consume(batch)

    async def _offload(self, body: bytes, envelope: Envelope) -> tuple[str, Counter[str]]:
        """A large envelope (a transaction of many spans, an event with a large
        context) is decoded, processed and prepared in a decode worker, as a large
        OTLP request is (runtime/offload.py): the event loop keeps serving the
        others meanwhile. What the answer needs is read here from the envelope."""
        event_id, items = summary(envelope)
        telemetry.OFFLOADED.inc()
        batch = self.ctx.pipeline.with_policy(
            Origin(self.project_id, len(body), self.trace_link(), self.client_ip()).new_batch())
        result = await self.ctx.pipeline.decode_pool.submit(  # type: ignore[union-attr]
            decode_envelope_body, (now_us(),), batch, "errors,spans", body)
        drops.count({"spans": result.dropped}, drops.INVALID)
        if result.results is not None:
            await self.ctx.pipeline.consume_prepared(result.results)
        return event_id, items


def _has_records(envelope: Envelope) -> bool:
    return any(item.type in RECORD_TYPES for item in envelope.items)


def sentry_routes(ctx: ReceiverContext) -> list[Any]:
    """The envelope and store endpoints, with or without their final slash."""
    return [(PROJECT + r"/envelope/?", SentryHandler, {"ctx": ctx, "kind": "envelope"}),
            (PROJECT + r"/store/?", SentryHandler, {"ctx": ctx, "kind": "store"})]
