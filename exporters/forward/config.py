"""The forwarding exporter's configuration (`exporters.forward`): its defaults,
its checks, and the URL each signal is sent to."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from model.errors import ConfigError
from runtime.configcheck import require_bool, require_int, require_str

FORWARDED_SIGNALS = ("traces", "logs", "errors", "deploys", "requests", "metrics")

# Where a Sounding gateway takes each signal on its ingest port (receivers.http):
# with `endpoint: http://gateway:3000` every signal reaches it. Traces, logs and
# metrics go as OTLP/HTTP protobuf, which any OTLP backend also takes: give
# `signals.traces`, `signals.logs` or `signals.metrics` a full URL
# (http://collector:4318/v1/logs) to send them to one.
PATHS = {
    "traces": "/ingest/v1/traces",
    "logs": "/ingest/v1/logs",
    "errors": "/ingest/errors/batch",
    "deploys": "/ingest/deploys",
    "requests": "/ingest/requests",
    "metrics": "/ingest/v1/metrics",
}

DEFAULTS: dict[str, Any] = {
    # The upstream's base URL, e.g. http://gateway:3000 (required unless every
    # forwarded signal is given a full URL below).
    "endpoint": "",
    # Per signal: true (endpoint + the Sounding path above), a full URL, or false
    # (not forwarded: the exporter does not queue it).
    "signals": {name: True for name in FORWARDED_SIGNALS},
    # Sent with every request; the gateway's ingest key goes here:
    # {Authorization: "Bearer snd_..."}.
    "headers": {},
    "timeout_seconds": 10,
    # Requests in flight per signal: the gateway commits concurrent requests
    # together, so a few in flight drain a backlog several times faster than one.
    "concurrent_requests": 4,
    # gzip or none: how bodies are compressed (they are stored compressed, too).
    "compression": "gzip",
    "tls": {"ca_file": "", "cert_file": "", "key_file": "", "insecure_skip_verify": False},
    # Bounds of the local queue; past them ingest answers 503 + Retry-After
    # (back-pressure: nothing already acknowledged is dropped).
    "queue_max_records": 1_000_000,
    "queue_max_bytes": 512 * 1024 * 1024,
    # What refused clients are told to wait (Retry-After, gRPC RetryInfo).
    "retry_after_seconds": 1,
    # The ceiling of the backoff between attempts when the upstream is unavailable.
    "max_backoff_seconds": 60,
}


def routes(config: dict[str, Any]) -> dict[str, str]:
    """The URL of every forwarded signal; a signal set to false is absent."""
    endpoint = str(config.get("endpoint") or "").rstrip("/")
    signals = {**DEFAULTS["signals"], **(config.get("signals") or {})}
    found = {}
    for name in FORWARDED_SIGNALS:
        value = signals[name]
        if value is False:
            continue
        found[name] = value if isinstance(value, str) else endpoint + PATHS[name]
    return found


def _check_url(path: str, url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{path} must be an http:// or https:// URL, got {url!r}")


def check(path: str, config: dict[str, Any]) -> None:
    require_str(path, config, "endpoint")
    endpoint = config.get("endpoint") or ""
    if endpoint:
        _check_url(f"{path}.endpoint", endpoint)
    for name, value in (config.get("signals") or {}).items():
        if value is True and not endpoint:
            raise ConfigError(f"{path}.endpoint is required to forward {name} "
                              f"(or give {path}.signals.{name} a full URL, or false)")
        if isinstance(value, str):
            _check_url(f"{path}.signals.{name}", value)
        elif not isinstance(value, bool):
            raise ConfigError(f"{path}.signals.{name} must be true, false or a URL")
    for key, value in (config.get("headers") or {}).items():
        if not isinstance(value, str | int):
            raise ConfigError(f"{path}.headers.{key} must be a string")
    if config.get("compression") not in ("gzip", "none"):
        raise ConfigError(f"{path}.compression must be gzip or none")
    tls = config.get("tls") or {}
    for key in ("ca_file", "cert_file", "key_file"):
        require_str(f"{path}.tls", tls, key)
    require_bool(f"{path}.tls", tls, "insecure_skip_verify")
    if bool(tls.get("cert_file")) != bool(tls.get("key_file")):
        raise ConfigError(f"{path}.tls: cert_file and key_file go together")
    for key in ("queue_max_records", "queue_max_bytes", "timeout_seconds",
                "max_backoff_seconds", "concurrent_requests"):
        require_int(path, config, key, 1)
    require_int(path, config, "retry_after_seconds", 0)
