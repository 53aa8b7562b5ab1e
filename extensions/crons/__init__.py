"""Cron monitors: the top-level `crons:` section (config.py) and the extension that
runs the cron checker (extension.py); the rules are storage/crons/checker.py's.
docs/crons.md says what a monitor does and how to send its check-ins."""
