"""The command line: `sounding serve | keys create|list|revoke | db upgrade`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import Any

from sounding import config as config_mod
from sounding import logthrottle
from sounding.errors import ConfigError
from sounding.service import Service, serve
from sounding.timeutil import iso_from_us
from storage import keys
from storage import secrets as shared_secrets
from storage.store import Store


def _store(config: dict[str, Any]) -> Store:
    storage = config["storage"]
    store = Store(storage["url"], storage.get("sqlite_synchronous", "NORMAL"))
    store.upgrade()
    return store


def _announce(service: Service) -> None:
    addresses = service.addresses()
    base = addresses[0] if addresses else "http://127.0.0.1:3000"
    for address in addresses:
        print(f"Sounding listening on {address}", flush=True)
    # Announced apart from the receivers: the first "listening on" address is the
    # ingestion API's, and tools (tests/support/server.py) read it so.
    dashboard = service.dashboard_addresses()
    for address in dashboard:
        print(f"Sounding dashboard on {address}", flush=True)
    if service.first_run_key:
        print(
            "\nFirst run: created project 'default' with this ingest key (shown once, "
            "stored only as a hash):\n\n"
            f"    {service.first_run_key}\n\n"
            "Send data with 'Authorization: Bearer <key>' to:\n"
            f"    errors    POST {base}/ingest/errors  and  {base}/ingest/errors/batch\n"
            f"    deploys   POST {base}/ingest/deploys\n"
            f"    requests  POST {base}/ingest/requests\n"
            f"    traces    OTEL_EXPORTER_OTLP_ENDPOINT={base}/ingest\n"
            f"    health    GET  {base}/health\n",
            flush=True,
        )
        if service.first_run_project_id is not None:
            print("Sentry SDKs: set the DSN to\n"
                  f"    {keys.dsn(service.first_run_key, base, service.first_run_project_id)}\n",
                  flush=True)
    if service.first_run_admin_token:
        print(
            "\nFirst run: generated the dashboard admin token (shown once, stored only as "
            "a hash;\nset SOUNDING_ADMIN_TOKEN to choose your own, or run "
            "'sounding admin-token rotate'):\n\n"
            f"    {service.first_run_admin_token}\n\n"
            f"Log in at {(dashboard or [base])[0]}/login, or read the API with "
            "'Authorization: Bearer <admin token>'.\n",
            flush=True,
        )


def cmd_serve(config: dict[str, Any], _args: argparse.Namespace) -> int:
    asyncio.run(serve(config, _announce))
    return 0


def cmd_keys_create(config: dict[str, Any], args: argparse.Namespace) -> int:
    store = _store(config)
    key, key_id = keys.create_key(store, args.project, sentry=args.sentry)
    print(f"project: {args.project}\nkey id:  {key_id}\nkey:     {key}")
    if args.sentry:
        project_id = keys.project_id_of(store, args.project)
        assert project_id is not None  # create_key made it
        print(f"DSN:     {keys.dsn(key, _ingest_address(config, args.host), project_id)}")
    print("The key is shown once; Sounding keeps only its hash.")
    return 0


def _ingest_address(config: dict[str, Any], host: str | None) -> str:
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


def cmd_keys_list(config: dict[str, Any], _args: argparse.Namespace) -> int:
    rows = keys.list_keys(_store(config))
    print(f"{'KEY ID':<14}{'PROJECT':<24}{'CREATED':<30}STATUS")
    for row in rows:
        status = f"revoked {iso_from_us(row.revoked_us)}" if row.revoked_us else "active"
        print(f"{row.key_id:<14}{row.project:<24}{iso_from_us(row.created_us):<30}{status}")
    return 0


def cmd_keys_revoke(config: dict[str, Any], args: argparse.Namespace) -> int:
    try:
        count = keys.revoke_key(_store(config), args.key_id)
    except ValueError as exc:
        print(f"sounding: {exc}", file=sys.stderr)
        return 2
    if count == 0:
        print(f"sounding: no active key with id {args.key_id}", file=sys.stderr)
        return 1
    print(f"revoked {count} key(s); running collectors stop accepting within "
          f"{config['auth'].get('cache_seconds', 10)} seconds")
    return 0


def cmd_admin_token_rotate(config: dict[str, Any], _args: argparse.Namespace) -> int:
    if config["dashboard"].get("admin_token"):
        print("sounding: the admin token is configured (SOUNDING_ADMIN_TOKEN or "
              "dashboard.admin_token); change it there", file=sys.stderr)
        return 2
    token = shared_secrets.rotate_admin_token(_store(config))
    print(f"admin token: {token}\nShown once; Sounding keeps only its hash. Running "
          "collectors accept it (and log out every session) within 10 seconds.")
    return 0


def cmd_db_upgrade(config: dict[str, Any], _args: argparse.Namespace) -> int:
    _store(config)
    print("database is at the latest schema")
    return 0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="sounding", description=__doc__)
    root.add_argument("--config", help="YAML configuration file (default: $SOUNDING_CONFIG)")
    sub = root.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="run the collector").set_defaults(func=cmd_serve)
    keys_p = sub.add_parser("keys", help="manage ingest keys")
    keys_sub = keys_p.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", help="create a key for a project (printed once)")
    create.add_argument("--project", required=True)
    create.add_argument("--sentry", action="store_true",
                        help="a key in Sentry's form (32 hex digits), and print the DSN")
    create.add_argument("--host", help="the host (or host:port, or URL) Sentry SDKs reach "
                        "this collector at, for the DSN; default: the configured one")
    create.set_defaults(func=cmd_keys_create)
    keys_sub.add_parser("list", help="list keys by id").set_defaults(func=cmd_keys_list)
    revoke = keys_sub.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument("key_id")
    revoke.set_defaults(func=cmd_keys_revoke)
    admin = sub.add_parser("admin-token", help="the dashboard admin token")
    admin_sub = admin.add_subparsers(dest="admin_command", required=True)
    admin_sub.add_parser("rotate", help="replace the generated admin token (printed once)"
                         ).set_defaults(func=cmd_admin_token_rotate)
    db = sub.add_parser("db", help="database maintenance")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    db_sub.add_parser("upgrade", help="apply migrations").set_defaults(func=cmd_db_upgrade)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: "
                        "%(message)s", stream=sys.stderr)
    # Alembic logs every migration step at INFO; only its warnings matter here.
    logging.getLogger("alembic").setLevel(logging.WARNING)
    try:
        config = config_mod.load(args.config)
        logging.getLogger().setLevel(str(config["logging"]["level"]).upper())
        logthrottle.install(float(config["logging"]["repeat_seconds"]))
        # One line per request is noise at ingest rates; client errors are counted in
        # /metrics instead. Server errors are always logged.
        if not config["logging"]["access_log"]:
            logging.getLogger("tornado.access").setLevel(logging.ERROR)
        return int(args.func(config, args))
    except ConfigError as exc:
        print(f"sounding: configuration error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
