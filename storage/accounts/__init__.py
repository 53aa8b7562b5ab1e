"""Team accounts, their sessions, failed logins and the dashboard's secrets."""
