"""Receivers: decode what arrives (HTTP, gRPC) into the internal record stream."""
