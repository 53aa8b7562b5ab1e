"""The base of every ingest handler: method, auth, media type and size are checked
from the headers alone, before the body is read; the body is streamed through a
bounded reader; every error is rendered by one `write_error`."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from tornado import httputil
from tornado.iostream import StreamClosedError
from tornado.web import HTTPError, RequestHandler, stream_request_body

from model.errors import (
    Overloaded,
    PayloadTooLarge,
    RateLimited,
    SoundingError,
    StoreUnavailable,
    Unauthenticated,
    UnsupportedMediaType,
)
from receiver import refusals
from receiver.auth import bearer_key, project_for
from receiver.http.body import BodyReader
from receiver.http.context import ReceiverContext
from receiver.status import http_error, reason_label
from receiver.traceparent import parse_traceparent
from runtime import telemetry
from runtime.ratelimit import PACE_SECONDS

JSON = "application/json"
PROTOBUF = "application/x-protobuf"


_date: tuple[int, str] = (0, "")  # (second, its Date header): one format a second


def date_header() -> str:
    """The Date header of this second. Formatting it costs 6.5 µs (email.utils), more
    than a single error's whole decode; a busy receiver answers hundreds a second."""
    global _date
    now = int(time.time())
    if _date[0] != now:
        _date = (now, httputil.format_timestamp(now))
    return _date[1]


class BaseHandler(RequestHandler):
    endpoint = "other"

    def initialize(self, ctx: ReceiverContext) -> None:
        self.ctx = ctx
        # Tornado sets the path's arguments only once they decode: a path that does not
        # (`/api/1/cron/%ff%fe/<key>/`) is refused with a 400 through write_error before
        # they exist, and an error answer that reads them (a door's `presented_key`)
        # must not fail in turn, uncounted, with a traceback in the log.
        self.path_args = []
        self.path_kwargs = {}

    def clear(self) -> None:
        # RequestHandler.clear as Tornado 6 writes it, with the Date of this second
        # (date_header) instead of one formatted for every response, and our Server
        # (so set_default_headers need not set it again: a set_header checks its value).
        self._headers = httputil.HTTPHeaders({"Server": "sounding",
                                              "Content-Type": "text/html; charset=UTF-8",
                                              "Date": date_header()})
        self.set_default_headers()
        self._write_buffer: list[bytes] = []
        self._status_code = 200
        self._reason = httputil.responses[200]

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs["exc_info"][1] if "exc_info" in kwargs else HTTPError(status_code)
        status, body, headers = self.error_answer(exc)
        self.set_status(status)
        if self.body_unread():
            # Tornado closes the connection after an answer given before the whole body
            # was read, without saying so: a keep-alive client (an SDK's connection
            # pool) would send its next request down the closed connection and lose
            # it. Said, the client opens a new connection instead.
            self.set_header("Connection", "close")
        for name, value in headers.items():
            self.set_header(name, value)
        if status == 405:
            allowed = ", ".join(m for m in self.SUPPORTED_METHODS if m != "OPTIONS")
            self.set_header("Allow", allowed)
            body = {"error": f"method {self.request.method} is not allowed here; use {allowed}"}
        elif status == 404:
            body = {"error": f"no endpoint at {self.request.path}"}
        telemetry.REFUSED.labels(self.endpoint, reason_label(status, exc)).inc()
        if status < 500 or status == 503:  # a server error is logged as one, with its trace
            refusals.refused(status, self.endpoint, exc, self.presented_key())
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    def error_answer(self, exc: BaseException | None
                     ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """(status, body, headers) for an error: receiver/status.py's mapping for the
        protocol this handler speaks."""
        return http_error(exc)

    def body_unread(self) -> bool:
        """Whether the request's body is still (partly) unread."""
        return False

    def presented_key(self) -> str | None:
        """The key this request sent, if it sent one that parses: named by its id
        when the request is refused. Read again here, only for refusals."""
        try:
            return bearer_key(self.request.headers.get("Authorization"))
        except Unauthenticated:
            return None

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        # Client mistakes and overload are answered and counted, not logged one by one.
        if isinstance(value, SoundingError | StreamClosedError):
            return
        if isinstance(value, HTTPError) and value.status_code < 500:
            return
        super().log_exception(typ, value, tb)


@stream_request_body
class DoorHandler(BaseHandler):
    """POST-only ingest endpoint. Subclasses set `content_types` and implement `ingest`;
    a door with its own rules (receiver/sentry/door.py) overrides `authenticate`,
    `read_media_type`, `error_answer` and the class attributes below."""

    SUPPORTED_METHODS = ("POST", "OPTIONS")  # type: ignore[assignment]
    # The methods that ingest (Sentry's HTTP check-in door takes GET too, for curl):
    # each gets the checks of `prepare` and the hand-over of `post`.
    ingest_methods: tuple[str, ...] = ("POST",)
    content_types: tuple[str, ...] = (JSON,)
    # Answered when `ingest` returns without setting a status.
    accepted_status = 202
    # CORS: the request headers a preflight allows when it names none, and the
    # response headers a browser script may read.
    cors_allow_headers = "Authorization, Content-Type, Content-Encoding"
    cors_expose_headers = ""
    # The limit categories (model/limits.py) of what this door carries: a request is
    # refused before its body when the project's limits close every one of them.
    limit_categories: tuple[str, ...] = ()

    project_id: int
    media_type: str
    _reader: BodyReader | None = None
    _body_error: SoundingError | None = None
    _refusal: SoundingError | None = None
    _started: float = 0.0
    _body_read = False  # Tornado calls `post` once the whole body has arrived
    _limit_held = False  # let in by the project's limits: released at the end

    def initialize(self, ctx: ReceiverContext) -> None:
        super().initialize(ctx)
        self._cors_headers()

    def body_unread(self) -> bool:
        return self.request.method in self.ingest_methods and not self._body_read

    def set_default_headers(self) -> None:
        super().set_default_headers()
        # Tornado calls this first from __init__, before initialize() gives us ctx
        # (initialize adds the CORS headers then), and again whenever an error
        # response clears the headers, so that a browser can read the error too.
        if hasattr(self, "ctx"):
            self._cors_headers()

    def _cors_headers(self) -> None:
        origin = self.request.headers.get("Origin")
        if origin and self._origin_allowed(origin):
            self.set_header("Access-Control-Allow-Origin", origin)
            self.set_header("Vary", "Origin")
            if self.cors_expose_headers:
                self.set_header("Access-Control-Expose-Headers", self.cors_expose_headers)

    def _origin_allowed(self, origin: str) -> bool:
        allowed = self.ctx.cors_origins
        return "*" in allowed or origin in allowed

    async def prepare(self) -> None:
        if self.request.method not in self.ingest_methods:
            return
        self._started = time.perf_counter()
        if self.ctx.closing:
            self.set_header("Connection", "close")
            raise StoreUnavailable("the collector is shutting down")
        await self.authenticate()
        self.media_type = self.read_media_type(self.request.headers.get("Content-Type"))
        raw_length = self.request.headers.get("Content-Length")
        length = int(raw_length) if raw_length is not None and raw_length.isdigit() else 0
        if length > self.ctx.max_body_bytes:
            raise PayloadTooLarge(
                f"the request body exceeds the limit of {self.ctx.max_body_bytes} bytes")
        # Already refusing? Then the body is read and thrown away as it comes, not
        # kept: under overload, memory does not grow with the requests being refused.
        # The project's limits first: the key alone decides them.
        self._refusal = self._closed() or self.ctx.pipeline.admission_error(
            self._project(), self.limit_categories)
        budget = self.ctx.body_budget
        if self._refusal is None and not budget.fits(length):
            self._refusal = Overloaded(
                "the collector is receiving too many request bodies at once",
                budget.retry_after)
        if self._refusal is None:
            self._reader = BodyReader(self.ctx.max_body_bytes,
                                      self.request.headers.get("Content-Encoding"), budget)

    def _closed(self) -> SoundingError | None:
        """RateLimited when the project's limits close this door's categories now;
        else the request is counted as let in until it finishes (`on_finish`)."""
        if not self.limit_categories or not hasattr(self, "project_id"):
            return None  # a Sentry envelope whose key is in its body: decided after
        refusal = self.ctx.pipeline.closed(self.project_id, self.limit_categories)
        self._limit_held = refusal is None
        return refusal

    async def authenticate(self) -> None:
        """Set `project_id` from the request's headers, before the body is read."""
        self.project_id = await project_for(self.ctx.auth,
                                            self.request.headers.get("Authorization"))

    def read_media_type(self, raw_type: str | None) -> str:
        """The media type of the body, one of `content_types`, or 415."""
        if not raw_type:
            raise UnsupportedMediaType(
                f"Content-Type is required; send one of: {', '.join(self.content_types)}")
        media_type = raw_type.split(";", 1)[0].strip().lower()
        if media_type not in self.content_types:
            raise UnsupportedMediaType(
                f"Content-Type {media_type!r} is not accepted here; send one of: "
                f"{', '.join(self.content_types)}")
        return media_type

    async def data_received(self, chunk: bytes) -> None:
        if self._reader is None or self._body_error is not None or self._finished:
            return
        try:
            # Inflated in bounded pieces, letting other requests (/health) in between.
            await self._reader.feed_async(chunk)
        except SoundingError as exc:
            # Too large, not decodable, or past the budget of bodies being read: answer
            # now and stop reading (Tornado closes the connection after a response sent
            # before the whole body arrived), and let go of what this body held.
            self._body_error = exc
            self._release_body()
            if not self._finished:
                self.send_error(exc_info=(type(exc), exc, exc.__traceback__))

    # Tornado passes a route's groups (the Sentry door's project id) as arguments;
    # handlers read them from self.path_args.
    async def post(self, *_path_args: str) -> None:
        self._body_read = True
        if self._body_error is not None or self._finished:
            return
        if self._refusal is not None:
            if isinstance(self._refusal, RateLimited):
                await asyncio.sleep(PACE_SECONDS)  # a flooding client is slowed down
            raise self._refusal
        assert self._reader is not None
        body = await self._reader.finish_async()
        if self.ctx.closing:
            self.set_header("Connection", "close")
            raise StoreUnavailable("the collector is shutting down")
        self._check_admission()
        # Counted only around the hand-over: shutdown waits for these acknowledgements,
        # and admission control bounds them across receivers (runtime/admission.py).
        project_id = self._project()
        admission = self.ctx.pipeline.admission
        admission.enter(project_id)
        self.ctx.in_flight += 1
        try:
            await self.ingest(body)
        finally:
            self.ctx.in_flight -= 1
            admission.leave(project_id)
        if self._status_code == 200:
            self.set_status(self.accepted_status)
        self.finish()

    def _check_admission(self) -> None:
        """Shed before decoding: under overload, a queue that is full refuses in
        microseconds what would otherwise cost a whole decode first. Asked from the
        headers too (`prepare`), but answered only once the body is in: answering
        before the body is read makes Tornado close the connection with the body
        unread, the kernel then resets it, and the client can lose the answer."""
        refusal = self.ctx.pipeline.admission_error(self._project(), self.limit_categories)
        if refusal is not None:
            raise refusal

    def _project(self) -> int | None:
        """The request's project, once known (a Sentry envelope's key may be in its
        body): admission sheds by project."""
        return getattr(self, "project_id", None)

    def _release_body(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.release()

    def _release_limit(self) -> None:
        if self._limit_held:
            self._limit_held = False
            self.ctx.pipeline.release(self.project_id, self.limit_categories)

    def on_connection_close(self) -> None:
        self._release_body()
        self._release_limit()
        super().on_connection_close()

    def on_finish(self) -> None:
        self._release_body()
        self._release_limit()
        if self._started:
            telemetry.child(telemetry.REQUEST_SECONDS, self.endpoint).observe(
                time.perf_counter() - self._started)

    def options(self, *_path_args: str) -> None:
        """CORS preflight. An origin that is not configured gets no CORS headers."""
        origin = self.request.headers.get("Origin")
        if origin and self._origin_allowed(origin):
            self.set_header("Access-Control-Allow-Methods", "POST, OPTIONS")
            requested = self.request.headers.get("Access-Control-Request-Headers")
            self.set_header("Access-Control-Allow-Headers",
                            requested or self.cors_allow_headers)
            self.set_header("Access-Control-Max-Age", "600")
        self.set_status(204)
        self.finish()

    def trace_link(self) -> tuple[str, str] | None:
        return parse_traceparent(self.request.headers.get("traceparent"))

    def client_ip(self) -> str | None:
        """The client's address (with `xheaders`, the one a trusted proxy forwarded)."""
        return self.request.remote_ip or None

    async def ingest(self, body: bytes) -> None:
        raise NotImplementedError
