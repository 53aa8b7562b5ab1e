"""What every OTLP signal's handler does (traces.py, logs.py, metrics.py): the request still
encoded (OtlpBody) goes to a decode worker (runtime/offload.py) when large, else
is decoded here, by the same pure function; records that cannot be kept are
dropped alone and counted, and the outcome carries OTLP's partial success."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from model import limits
from model.errors import InvalidInput
from receiver.signals.outcome import Origin, Outcome
from runtime import drops, telemetry, usage
from runtime.pipeline import Pipeline


@dataclass(frozen=True, slots=True)
class OtlpBody:
    """An OTLP request as it came: protobuf, or OTLP/JSON."""

    data: bytes
    protobuf: bool


@dataclass(frozen=True, slots=True)
class OtlpDecode:
    """How a signal decodes its body: `function(body, protobuf, *args)`, here or in a
    decode worker (so defined at a module's top level); the result holds the records
    in its attribute `into`, the Batch field they go to. `label` names the records in
    the dropped counter, `noun` in the 400 of a request with none kept."""

    function: Callable[..., Any]
    into: str
    label: str
    noun: str


def count_dropped(decode: OtlpDecode, dropped: int, kept: bool, reasons: list[str]) -> None:
    """Dropped records are counted; a request whose every record was dropped is
    InvalidInput (HTTP 400, gRPC INVALID_ARGUMENT)."""
    if dropped:
        drops.count({decode.label: dropped}, drops.INVALID)
        if not kept:
            raise InvalidInput(f"no {decode.noun} in the request could be kept",
                               [{"field": reason.split(": ", 1)[0],
                                 "error": reason.split(": ", 1)[1]} for reason in reasons])


def maps_frames(body: bytes) -> bool:
    """Whether the request carries a JavaScript exception's stack trace: it is then
    decoded and processed on the event loop, where symbolication (processors/
    symbolicate.py) reads the uploaded source maps from the store, which a decode
    worker does not have. Two byte searches; most requests fail the first."""
    return b"exception.stacktrace" in body and b".js:" in body
def count_invalid(decode: OtlpDecode, origin: Origin, dropped: int) -> None:
    """The records a door could not read, in the project's usage."""
    if dropped:
        usage.count(origin.project_id, limits.BATCH_FIELDS[decode.into], limits.INVALID,
                    dropped)


async def handle_otlp(decode: OtlpDecode, pipeline: Pipeline, origin: Origin,
                      document: OtlpBody, *args: Any) -> Outcome:
    body = document.data
    pool = pipeline.decode_pool
    if pool is not None and pool.wants(len(body)) and not maps_frames(body):
        telemetry.OFFLOADED.inc()
        result = await pool.submit(decode.function, (document.protobuf, *args),
                                   pipeline.with_policy(origin.new_batch()), decode.into,
                                   body)
        count_invalid(decode, origin, result.dropped)
        count_dropped(decode, result.dropped, result.results is not None, result.reasons)
        if result.results is not None:
            await pipeline.consume_prepared(result.results, origin.project_id, result.counts,
                                            origin.size)
        return Outcome(dropped=result.dropped, reasons=tuple(result.reasons))
    decoded = decode.function(body, document.protobuf, *args)
    records = getattr(decoded, decode.into)
    count_invalid(decode, origin, decoded.dropped)
    count_dropped(decode, decoded.dropped, bool(records), decoded.reasons)
    batch = origin.new_batch()
    setattr(batch, decode.into, records)
    await pipeline.consume(batch)
    return Outcome(dropped=decoded.dropped, reasons=tuple(decoded.reasons))
