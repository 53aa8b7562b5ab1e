"""What the commands share: the store, the ingest address, the --config option."""

from __future__ import annotations

import argparse
from typing import Any

from storage.store import Store


def config_option() -> argparse.ArgumentParser:
    """`--config`, accepted before the command and after it (`sounding --config f
    serve` and `sounding serve --config f`): a parent of the root and of every
    subcommand. SUPPRESS: a subcommand that was not given it leaves the root's."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--config", default=argparse.SUPPRESS, metavar="FILE",
                        help="YAML configuration file (default: $SOUNDING_CONFIG)")
    return parent


def store(config: dict[str, Any]) -> Store:
    storage = config["storage"]
    opened = Store(storage["url"], storage.get("sqlite_synchronous", "NORMAL"))
    opened.upgrade()
    return opened


def ingest_address(config: dict[str, Any], host: str | None) -> str:
    """Where SDKs reach the ingest listener: `--host` (a host, host:port or URL),
    else the configured host and port (a wildcard address read as 127.0.0.1)."""
    http = config["receivers"].get("http") or {}
    port = http.get("port", 3000)
    if host:
        if "://" in host or host.rpartition(":")[2].isdigit():
            return host
        return f"{host}:{port}"
    configured = str(http.get("host") or "")
    shown = "127.0.0.1" if configured in ("", "0.0.0.0", "::") else configured
    return f"{shown}:{port}"
