"""Limits per project in the database: their settings (settings.py), the buckets and
quota counts shared by every collector (leases.py), and usage per hour (usage.py)."""
