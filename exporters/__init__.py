"""Exporter stages: persist the record stream."""
