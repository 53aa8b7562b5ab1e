"""Sounding's built-in extensions: cross-cutting parts that components ask."""
