"""Storage: one schema on SQLite or PostgreSQL through SQLAlchemy Core."""
