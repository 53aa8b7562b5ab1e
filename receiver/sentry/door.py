"""The Sentry door: `POST /api/<project id>/envelope/`, the legacy
`POST /api/<project id>/store/` and the HTTP check-in door
`GET|POST /api/<project id>/cron/<monitor slug>/<key>/` (docs/crons.md) on the
ingest port, for Sentry's SDKs pointed at Sounding by their DSN alone
(docs/sentry.md).

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

import re
from collections import Counter
from typing import Any

from model import limits
from model.errors import InvalidInput, SoundingError
from model.timeutil import now_us
from receiver.http.base import DoorHandler
from receiver.http.context import ReceiverContext
from receiver.jsonbody import parse_json
from receiver.sentry.auth import key_from_dsn, project_for_sentry, request_key
from receiver.sentry.checkin import decode_check_in, from_query
from receiver.sentry.client_report import discarded
from receiver.sentry.envelope import Envelope, parse_envelope
from receiver.sentry.items import (
    RECORD_FIELDS,
    RECORD_TYPES,
    Decoded,
    decode_envelope,
    decode_envelope_body,
    decode_store,
    summary,
)
from receiver.signals.outcome import Origin
from receiver.status import sentry_http_error
from runtime import drops, telemetry, usage

# Project ids are database ids: 18 digits is beyond any, and keeps int() cheap.
PROJECT = r"/api/(\d{1,18})"
# A key in a URL (browser SDKs' `sentry_key` query parameter, the check-in door's path),
# shown as this in the access log and in logged errors: never a secret in a log line.
FILTERED = "[Filtered]"
_QUERY_KEY = re.compile(r"(sentry_key=)[^&]*")
_PATH_KEY = re.compile(r"^(/api/\d+/cron/[^/?]*/)[^/?]+")
_FILTER = r"\g<1>" + FILTERED


class SentryHandler(DoorHandler):
    accepted_status = 200
    # Refused before the body only when the project's limits close all of these.
    limit_categories = (limits.ERROR, limits.SPAN, limits.SESSION, limits.LOG, limits.METRIC)
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

    def _request_summary(self) -> str:
        """What Tornado's access log and error log show of the request: its URI
        without the key it may carry."""
        uri = _QUERY_KEY.sub(_FILTER, self.request.uri or "")
        return f"{self.request.method} {_PATH_KEY.sub(_FILTER, uri)} ({self.request.remote_ip})"

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
            self._client_reports(envelope)
            pool = self.ctx.pipeline.decode_pool
            if (pool is not None and pool.wants(len(body)) and _has_records(envelope)
                    and not _maps_frames(envelope)):
                event_id, items = await self._offload(body, envelope)
            else:
                decoded = decode_envelope(envelope, now_us(), body)
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

    def _client_reports(self, envelope: Envelope) -> None:
        """What the SDK says it dropped, into the project's usage (before the records:
        an envelope refused for its records keeps its reports)."""
        for category, reason, quantity in discarded(envelope):
            usage.count(self.project_id, category, limits.CLIENT_DISCARDED, quantity,
                        reason=reason)

    def _count_dropped(self, by_signal: dict[str, int]) -> None:
        """Records dropped alone (Decoded.drops()), each counted once under its signal
        and in the project's usage under its category (feedback has none)."""
        drops.count(by_signal, drops.INVALID)
        for signal, n in by_signal.items():
            category = _DROP_CATEGORIES.get(signal)
            if n and category is not None:
                usage.count(self.project_id, category, limits.INVALID, n)

    async def _commit(self, decoded: Decoded, size: int) -> None:
        self._count_dropped(decoded.drops())
        # Session items are limited and counted as items (limits.SESSION), whatever
        # session counts they make; feedback and check-ins are not limited.
        sessions = {limits.SESSION: _sessions(decoded.items)}
        pipeline = self.ctx.pipeline
        if not (decoded.errors or decoded.spans or decoded.sessions or decoded.feedback
                or decoded.check_ins or decoded.logs or decoded.metrics):
            # Only ignored items: nothing to commit, but sessions are limited and counted.
            if sessions[limits.SESSION]:
                await pipeline.admit(self.project_id, sessions)
                pipeline.accepted(self.project_id, sessions)
            return
        batch = Origin(self.project_id, size, self.trace_link(), self.client_ip()).new_batch()
        batch.errors.extend(decoded.errors)
        batch.spans.extend(decoded.spans)
        batch.sessions.extend(decoded.sessions)
        batch.feedback.extend(decoded.feedback)
        batch.check_ins.extend(decoded.check_ins)
        batch.logs.extend(decoded.logs)
        batch.metrics.extend(decoded.metrics)
        await pipeline.consume(batch, sessions)

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
            decode_envelope_body, (now_us(),), batch, RECORD_FIELDS, body)
        self._count_dropped(result.drops)
        if result.results is not None:
            counts = {**result.counts, limits.SESSION: _sessions(items)}
            await self.ctx.pipeline.consume_prepared(result.results, self.project_id, counts,
                                                     len(body))
        return event_id, items


class CronHandler(SentryHandler):
    """Sentry's HTTP check-in door for curl and shell jobs:
    `GET|POST /api/<project id>/cron/<monitor slug>/<public key>/?status=ok`, the
    query or a JSON body carrying the check-in (receiver/sentry/checkin.py). The key
    is the path's (or the usual header or query); answered 202 with no body once
    committed, as Sentry does."""

    SUPPORTED_METHODS = ("GET", "POST", "OPTIONS")  # type: ignore[assignment]
    ingest_methods = ("GET", "POST")
    accepted_status = 202

    def presented_key(self) -> str | None:
        return self.path_args[2] if len(self.path_args) > 2 else super().presented_key()

    async def authenticate(self) -> None:
        self.project_id = await project_for_sentry(self.ctx.auth, self.presented_key(),
                                                   self._url_project())

    async def ingest(self, body: bytes) -> None:
        parsed = parse_json(body) if body.strip() else {}
        if not isinstance(parsed, dict):
            raise InvalidInput("the check-in must be a JSON object",
                               [{"field": "body", "error": "must be a JSON object"}])
        query = {name: self.get_query_argument(name) for name in self.request.query_arguments}
        check_in = decode_check_in(from_query(query, parsed), now_us(), "check_in",
                                   slug=self.path_args[1])
        batch = Origin(self.project_id, len(body), self.trace_link()).new_batch()
        batch.check_ins.append(check_in)
        await self.ctx.pipeline.consume(batch)
        telemetry.SENTRY_ITEMS.labels("check_in").inc()
        self.set_status(202)

    get = DoorHandler.post


# What a record dropped alone counts under in the project's usage, by its signal:
# sessions are limited and counted as items (limits.SESSION), feedback is not limited.
_DROP_CATEGORIES = {**limits.BATCH_FIELDS, "sessions": limits.SESSION}


def _sessions(items: Counter[str]) -> int:
    return items.get("session", 0) + items.get("sessions", 0)


def _has_records(envelope: Envelope) -> bool:
    return any(item.type in RECORD_TYPES for item in envelope.items)


# An event that names a source map's debug id, or a JavaScript event (which a legacy
# upload may map by its release), is processed on the event loop: symbolication
# (processors/symbolicate.py) reads the uploaded maps from the store, which a decode
# worker does not have. A byte search, so that other events pay next to nothing (`find`,
# not `in`: on bytes Python 3.11 raises and clears a TypeError first).
_MAPPED_MARKS = (b'"sourcemap"', b'"platform":"javascript"', b'"platform":"node"')


def _maps_frames(envelope: Envelope) -> bool:
    return any(item.type == "event" and any(item.payload.find(mark) >= 0
                                            for mark in _MAPPED_MARKS)
               for item in envelope.items)


def sentry_routes(ctx: ReceiverContext) -> list[Any]:
    """The envelope, store and check-in endpoints, with or without their final slash."""
    return [(PROJECT + r"/envelope/?", SentryHandler, {"ctx": ctx, "kind": "envelope"}),
            (PROJECT + r"/store/?", SentryHandler, {"ctx": ctx, "kind": "store"}),
            (PROJECT + r"/cron/([^/]{1,200})/([^/]{1,200})/?", CronHandler,
             {"ctx": ctx, "kind": "cron"})]
