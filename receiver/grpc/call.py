"""One unary gRPC call, the way every Sounding service handles it: the key from the
`authorization` metadata, the raw request bytes handed to the method (so that an
undecodable message is our INVALID_ARGUMENT, not grpcio's generic error: see
receiver/grpc/messages.py), and every error kind mapped to a status in
receiver/status.py."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import grpc

from model.component import Authenticator
from model.errors import SoundingError
from receiver import refusals
from receiver.auth import bearer_key, project_for
from receiver.status import grpc_error, http_error, reason_label
from receiver.traceparent import parse_traceparent
from runtime import telemetry
from runtime.pipeline import Pipeline
from runtime.ratelimit import PACE_SECONDS

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Call:
    """What a method gets: the caller's project and the request as it arrived."""

    project_id: int
    body: bytes
    metadata: dict[str, str | bytes]
    pipeline: Pipeline
    peer: str = ""  # grpc's context.peer(): "ipv4:1.2.3.4:5678", "ipv6:[::1]:5678"

    def client_ip(self) -> str | None:
        """The caller's address, from the peer gRPC names (None for a Unix socket)."""
        kind, _, rest = self.peer.partition(":")
        if kind == "ipv4":
            return rest.rsplit(":", 1)[0] or None
        if kind == "ipv6":
            return rest.rsplit(":", 1)[0].strip("[]") or None
        return None

    def trace_link(self) -> tuple[str, str] | None:
        value = self.metadata.get("traceparent")
        return parse_traceparent(value) if isinstance(value, str) else None


Method = Callable[[Call], Awaitable[bytes]]


def unary(endpoint: str, method: Method, pipeline: Pipeline,
          auth: Authenticator, categories: tuple[str, ...] = ()) -> grpc.RpcMethodHandler:
    """A raw-bytes unary handler around `method` (request and response serialized by us).
    `categories`: what the method carries (model/limits.py), refused from the key alone
    while the project's limits close them all."""

    async def handle(body: bytes, context: grpc.aio.ServicerContext) -> bytes:
        started = time.perf_counter()
        metadata: dict[str, str | bytes] = {}
        for key, value in context.invocation_metadata() or ():
            metadata.setdefault(key.lower(), value)
        error: BaseException | None = None
        held: int | None = None  # the project let in by its limits, released at the end
        try:
            header = metadata.get("authorization")
            project_id = await project_for(auth, header if isinstance(header, str) else None)
            # Shed before decoding, as the HTTP receiver does; the project's limits first.
            if categories:
                limited = pipeline.closed(project_id, categories)
                if limited is not None:
                    await asyncio.sleep(PACE_SECONDS)  # a flooding client is slowed down
                    raise limited
                held = project_id
            refusal = pipeline.admission_error(project_id, categories)
            if refusal is not None:
                raise refusal
            with pipeline.admission.admitted(project_id):
                response = await method(Call(project_id, body, metadata, pipeline,
                                             context.peer() or ""))
        except SoundingError as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001 - answered INTERNAL, and logged: our bug
            log.exception("gRPC %s failed", endpoint)
            error = exc
        finally:
            if held is not None:
                pipeline.release(held, categories)
        if error is None:
            telemetry.child(telemetry.REQUEST_SECONDS, endpoint).observe(
                time.perf_counter() - started)
            return response
        # Outside the try: abort() raises to end the call, and must not be caught above.
        status = http_error(error)[0]
        telemetry.REFUSED.labels(endpoint, reason_label(status, error)).inc()
        if status != 500:  # a server error was logged above, with its traceback
            refusals.refused(status, endpoint, error, _presented_key(metadata))
        code, message, trailers = grpc_error(error)
        await context.abort(code, message, trailing_metadata=trailers)
        raise AssertionError("unreachable: abort() raises")

    return grpc.unary_unary_rpc_method_handler(handle)


def _presented_key(metadata: dict[str, str | bytes]) -> str | None:
    header = metadata.get("authorization")
    try:
        return bearer_key(header if isinstance(header, str) else None)
    except SoundingError:
        return None


def service(name: str, methods: dict[str, tuple[str, Method, tuple[str, ...]]],
            pipeline: Pipeline, auth: Authenticator) -> grpc.GenericRpcHandler:
    """A service `name` whose methods are {method name: (metrics endpoint, method,
    limit categories)}."""
    return grpc.method_handlers_generic_handler(name, {
        method_name: unary(endpoint, method, pipeline, auth, categories)
        for method_name, (endpoint, method, categories) in methods.items()})
