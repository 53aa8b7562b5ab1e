"""`sounding db upgrade | vacuum`: database maintenance."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from sounding.cli.common import store


def cmd_upgrade(config: dict[str, Any], _args: argparse.Namespace) -> int:
    store(config)
    print("database is at the latest schema")
    return 0


def cmd_vacuum(config: dict[str, Any], _args: argparse.Namespace) -> int:
    """SQLite: rewrite the file once so that it gives freed pages back (docs/storage.md,
    "Retention"); best with the collectors stopped."""
    from storage.retention import sqlite_space

    opened = store(config)
    if opened.dialect != "sqlite":
        print("db vacuum is for SQLite; PostgreSQL runs autovacuum", file=sys.stderr)
        return 2
    after = sqlite_space.vacuum(opened)
    print(f"database rewritten: {after.pages * after.page_size:,} bytes, incremental")
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    db = sub.add_parser("db", parents=[common], help="database maintenance")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    db_sub.add_parser("upgrade", parents=[common], help="apply migrations"
                      ).set_defaults(func=cmd_upgrade)
    db_sub.add_parser("vacuum", parents=[common], help="SQLite: rewrite the file to give "
                      "free pages back (once, for a file made before retention)"
                      ).set_defaults(func=cmd_vacuum)
