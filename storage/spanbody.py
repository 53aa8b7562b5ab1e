"""A span's stored body: its attributes, events and links as an OTLP `Span` message.

The columns of the `spans` table hold what is searched and shown in lists (ids,
name, kind, times, status, service); the body holds the rest. A span that arrived
as protobuf and that no pipeline stage looked into is stored as the bytes it came
in: serialising a parsed message again is done in C and costs about a microsecond,
where turning its attributes into JSON cost twenty. On reading, the columns win
over the same fields in the body (a processor may have renamed the span).

Resources are stored once in the `resources` table, keyed by a hash of the
project and the resource's attributes, instead of once per span.
"""

from __future__ import annotations

import hashlib
from typing import Any

from opentelemetry.proto.trace.v1 import trace_pb2

from model.otlp_encode import fill_span
from model.otlp_values import attributes_of, links_of
from model.records import Span


def encode(span: Span) -> bytes:
    """The span as OTLP Span bytes (model/otlp_encode.py), its columns aside."""
    if span.otlp is not None and span.untouched:
        return span.otlp_bytes()
    out = trace_pb2.Span()
    fill_span(out, span)
    return out.SerializeToString()


def decode(body: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(attributes, events) of a stored body: what a trace search reads of many spans,
    without their links."""
    message = trace_pb2.Span.FromString(body)
    return attributes_of(message.attributes), _events(message)


def decode_with_links(body: bytes
                      ) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """(attributes, events, links) of a stored body, links as `Span.links` holds them
    (model/records.py): what one trace's page shows of each span."""
    message = trace_pb2.Span.FromString(body)
    return attributes_of(message.attributes), _events(message), links_of(message.links)


def _events(message: trace_pb2.Span) -> list[dict[str, Any]]:
    return [{"name": e.name, "time_unix_nano": e.time_unix_nano,
             "attributes": attributes_of(e.attributes)} for e in message.events]


def resource_id(project_id: int, attributes_json: str) -> int:
    """A stable 63-bit id for a project's resource (positive in a signed BIGINT).
    At 2^63 values, two different resources sharing an id would take billions of
    distinct resources in one database."""
    digest = hashlib.blake2b(b"%d\n%s" % (project_id, attributes_json.encode()),
                             digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1
