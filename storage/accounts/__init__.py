"""Team accounts, their sessions, API tokens, failed logins and the dashboard's secrets."""
