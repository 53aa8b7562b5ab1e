"""A real OpenTelemetry Python SDK application recording HTTP server durations, run
as a subprocess by the tests so that the OTEL_EXPORTER_OTLP_* environment applies
exactly as it would in a user's process (endpoint, headers, protocol, temporality
preference, default histogram aggregation).

It reads one JSON line per export interval on stdin: a list of requests
[[duration_s, status, route], ...] to record, then exports (force_flush) and prints
one JSON line: {"result": "SUCCESS" | "FAILURE"}. It stops at end of input.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource

# The boundaries HTTP server instrumentations advise (semantic conventions).
BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]


def exporter() -> Any:
    """The exporter OTEL_EXPORTER_OTLP_PROTOCOL names, as the SDK's auto-configuration
    picks it (each exporter reads the rest of the environment itself)."""
    if os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    else:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import (  # type: ignore
            OTLPMetricExporter,
        )
    return OTLPMetricExporter()


def main() -> None:
    # Exports only when told: an interval far longer than any test.
    reader = PeriodicExportingMetricReader(exporter(),
                                           export_interval_millis=3_600_000)
    provider = MeterProvider(metric_readers=[reader], resource=Resource.create(
        {"service.name": "shop", "deployment.environment.name": "prod"}))
    meter = provider.get_meter("opentelemetry.instrumentation.flask", "0.1")
    duration = meter.create_histogram("http.server.request.duration", unit="s",
                                      description="Duration of HTTP server requests.",
                                      explicit_bucket_boundaries_advisory=BOUNDARIES)
    for line in sys.stdin:
        for seconds, status, route in json.loads(line):
            duration.record(seconds, {"http.request.method": "GET", "http.route": route,
                                      "http.response.status_code": status,
                                      "url.scheme": "http"})
        ok = provider.force_flush(timeout_millis=30_000)
        print(json.dumps({"result": "SUCCESS" if ok else "FAILURE"}), flush=True)
    provider.shutdown()


if __name__ == "__main__":
    main()
