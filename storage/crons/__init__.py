"""Cron monitors in the store: the monitors and their configuration (monitors.py),
the checker that turns check-ins and the clock into states, incidents and alert
facts (checker.py). The reads for the dashboard are storage/queries/crons.py."""
