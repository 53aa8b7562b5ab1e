"""Sounding: an OpenTelemetry-compatible APM and error-tracking collector."""

__version__ = "0.14.0"
