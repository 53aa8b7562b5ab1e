"""The OpenTelemetry Python SDK's OTLP span exporter against a project over its rate
limit, run as a subprocess by tests/receiver/test_limits_clients.py. Usage:
`python -m tests.receiver.otlp_sdk_limits_client http|grpc <endpoint> <key> <spans>`.

It records twice `spans` spans, exports them in two halves back to back with the exporter the SDK
ships (the second export finds the project's bucket empty), and prints one JSON
object: each export's result and how long it took, retries included.
"""

from __future__ import annotations

import json
import sys
import time

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def main() -> None:
    protocol, endpoint, key, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("limits")
    for i in range(2 * count):
        with tracer.start_as_current_span(f"op {i}"):
            pass
    spans = memory.get_finished_spans()
    exporter: object
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        exporter = OTLPSpanExporter(endpoint=endpoint, insecure=True, timeout=20,
                                    headers={"authorization": f"Bearer {key}"})
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )
        exporter = HttpExporter(endpoint=endpoint, timeout=20,
                                headers={"authorization": f"Bearer {key}"})
    results = []
    for part in (spans[:count], spans[count:]):
        started = time.monotonic()
        result = exporter.export(part)  # type: ignore[attr-defined]
        results.append({"result": result.name, "seconds": time.monotonic() - started})
    print(json.dumps(results))


if __name__ == "__main__":
    main()
