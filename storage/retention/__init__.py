"""Retention: the sweep, its lease, and free pages given back to the disk."""
