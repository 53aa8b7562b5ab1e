"""Sentry's SDKs as a door: envelopes and the legacy store endpoint, decoded into
Sounding's records (docs/sentry.md)."""
