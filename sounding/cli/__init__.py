"""The command line: `sounding serve | check-config | projects | keys | users | tokens |
admin-token | db upgrade|vacuum | version`, one module per concept; `sounding.cli:main` is
the entry point."""

from __future__ import annotations

import argparse
import logging
import sys
from importlib import metadata
from typing import Any

from model.errors import ConfigError
from runtime import logsetup
from sounding import config as config_mod
from sounding.cli import checkconfig, db, keys, projects, serve, tokens, users
from sounding.cli.common import config_option


def version() -> str:
    """The installed distribution's version (pyproject.toml), not a copy of it."""
    try:
        return metadata.version("sounding")
    except metadata.PackageNotFoundError:  # run from a checkout without installing
        return "unknown (not installed)"


def cmd_version(_config: dict[str, Any] | None, _args: argparse.Namespace) -> int:
    print(f"sounding {version()}")
    return 0


def parser() -> argparse.ArgumentParser:
    common = config_option()
    root = argparse.ArgumentParser(prog="sounding", description=__doc__, parents=[common])
    root.add_argument("--version", action="version", version=f"sounding {version()}")
    sub = root.add_subparsers(dest="command", required=True)
    serve.register(sub, common)
    checkconfig.register(sub, common)
    projects.register(sub, common)
    keys.register(sub, common)
    users.register(sub, common)
    tokens.register(sub, common)
    db.register(sub, common)
    # --config taken (and not read) here too, so that every command accepts it.
    sub.add_parser("version", parents=[common], help="print the version").set_defaults(
        func=cmd_version, needs_config=False)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not getattr(args, "needs_config", True):
        return int(args.func(None, args))
    # Until the configuration is read: text at INFO (a bad file is reported so).
    logsetup.configure()
    # Alembic logs every migration step at INFO; only its warnings matter here.
    logging.getLogger("alembic").setLevel(logging.WARNING)
    try:
        config = config_mod.load(getattr(args, "config", None))
        settings = config["logging"]
        logsetup.configure(str(settings["level"]), str(settings["format"]),
                           float(settings["repeat_seconds"]),
                           float(settings["refused_seconds"]))
        # One line per request is noise at ingest rates; client errors are counted in
        # /metrics instead, and refusals logged by kind (receiver/refusals.py).
        # Server errors are always logged.
        if not settings["access_log"]:
            logging.getLogger("tornado.access").setLevel(logging.ERROR)
        return int(args.func(config, args))
    except ConfigError as exc:
        print(f"sounding: configuration error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
