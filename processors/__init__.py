"""Processor stages: transform the record stream between receivers and exporters."""
