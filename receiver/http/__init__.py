"""The HTTP receiver: one Tornado server, its doors, and what every door checks of a
request."""
