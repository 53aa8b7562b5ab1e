"""Retention: the top-level `retention:` section (config.py) and the extension that
runs the sweep (extension.py); the SQL is storage/retention/sweep.py. docs/storage.md,
"Retention", says what each setting does and what an error group shows after."""
