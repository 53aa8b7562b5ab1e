"""Where a Sentry record of the attribute-based kinds came from: the resource of
streamed spans (receiver/sentry/span_stream.py), logs (receiver/sentry/logs.py) and
trace metrics (receiver/sentry/trace_metrics.py). These three carry no event around
them: the SDK puts what an event keeps on its top level (release, environment, SDK) on
every record as typed attributes, `{"sentry.release": {"type": "string", "value":
"shop@1.2"}}`. One module reads them, so that a span, a log and a metric of one
process name the same service and share the same resource. Pure; never raises.

- `service.name` from a `service` or `service.name` attribute (the scope's,
  `Sentry.setAttribute`), else `unknown_service:` + `sentry.platform`, else the
  platform an event of the SDK would name (`_platform`): a span and a log of one
  process then name the same service, though the Python SDK puts `sentry.platform`
  on its spans only;
- `deployment.environment.name` from `sentry.environment`, `service.version` from
  `sentry.release`, `telemetry.sdk.*` from `sentry.sdk.*`.

Those become resource attributes only, not the record's too (ON_THE_RESOURCE).
"""

from __future__ import annotations

from typing import Any

from receiver.sentry.values import SERVICE_TAGS, service_of, text

# Resource attribute: the Sentry attribute it is read from.
RESOURCE_ATTRIBUTES = {
    "deployment.environment.name": "sentry.environment",
    "service.version": "sentry.release",
    "telemetry.sdk.name": "sentry.sdk.name",
    "telemetry.sdk.version": "sentry.sdk.version",
}
# What a record does not keep among its own attributes: it is its resource's.
ON_THE_RESOURCE = frozenset({*RESOURCE_ATTRIBUTES.values(), "service.name"})
# The values a resource is made of: the records of one request that have the same share
# one dict (a stage that reads the resource reads it once per resource, as for OTLP).
Resource = tuple[str | None, ...]
Resources = dict[Resource, dict[str, Any]]


def _platform(attributes: dict[str, Any]) -> str | None:
    named = text(attributes.get("sentry.platform"))
    if named:
        return named
    sdk = text(attributes.get("sentry.sdk.name"))
    if sdk is None:
        return None
    # sentry.<language>[.<integration>]: `sentry.python.flask` is python (the Python
    # SDK names itself after the web framework it found); JavaScript's platform is its
    # runtime, the last part (`sentry.javascript.node` is node).
    parts = sdk.split(".")
    if len(parts) < 2 or parts[1] == "javascript":
        return parts[-1] or None
    return parts[1] or None


def resource_of(attributes: dict[str, Any], known: Resources) -> dict[str, Any]:
    """The resource of a record with these (plain) attributes; `known` holds those
    already made for the request, so that records alike share one dict."""
    tags = {name: shown for name in SERVICE_TAGS
            if (shown := text(attributes.get(name))) is not None}
    service = service_of({"platform": _platform(attributes)}, tags)
    values = (service, *(text(attributes.get(name)) for name in RESOURCE_ATTRIBUTES.values()))
    resource = known.get(values)
    if resource is None:
        found = dict(zip(("service.name", *RESOURCE_ATTRIBUTES), values, strict=True))
        resource = known[values] = {k: v for k, v in found.items() if v is not None}
    return resource
