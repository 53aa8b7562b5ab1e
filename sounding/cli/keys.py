"""`sounding keys create|list|revoke|rotate` and `sounding admin-token rotate`; each
change is recorded in the audit log as made by the command line (Actor.cli)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from model.timeutil import iso_from_us, now_us
from sounding.cli.common import ingest_address, store
from storage import keys
from storage.accounts import secrets as shared_secrets
from storage.audit.log import Actor

# `keys rotate` without --revoke-old or --revoke-after: the old keys keep working a
# day, time for every sender to be given the new one.
DEFAULT_GRACE_SECONDS = 86400


def cmd_create(config: dict[str, Any], args: argparse.Namespace) -> int:
    opened = store(config)
    key, key_id = keys.create_key(opened, args.project, sentry=args.sentry, actor=Actor.cli())
    print(f"project: {args.project}\nkey id:  {key_id}\nkey:     {key}")
    if args.sentry:
        project_id = keys.project_id_of(opened, args.project)
        assert project_id is not None  # create_key made it
        print(f"DSN:     {keys.dsn(key, ingest_address(config, args.host), project_id)}")
    print("The key is shown once; Sounding keeps only its hash.")
    return 0


def status(revoked_us: int | None, now: int) -> str:
    if revoked_us is None:
        return "active"
    if revoked_us > now:
        return f"active until {iso_from_us(revoked_us)}"
    return f"revoked {iso_from_us(revoked_us)}"


def cmd_list(config: dict[str, Any], _args: argparse.Namespace) -> int:
    rows = keys.list_keys(store(config))
    now = now_us()
    print(f"{'KEY ID':<14}{'PROJECT':<24}{'CREATED':<30}STATUS")
    for row in rows:
        print(f"{row.key_id:<14}{row.project:<24}{iso_from_us(row.created_us):<30}"
              f"{status(row.revoked_us, now)}")
    return 0


def cmd_revoke(config: dict[str, Any], args: argparse.Namespace) -> int:
    try:
        count = keys.revoke_key(store(config), args.key_id, Actor.cli())
    except ValueError as exc:
        print(f"sounding: {exc}", file=sys.stderr)
        return 2
    if count == 0:
        print(f"sounding: no active key with id {args.key_id}", file=sys.stderr)
        return 1
    print(f"revoked {count} key(s); running collectors stop accepting within "
          f"{config['auth'].get('cache_seconds', 10)} seconds")
    return 0


def cmd_rotate(config: dict[str, Any], args: argparse.Namespace) -> int:
    grace = 0 if args.revoke_old else (
        DEFAULT_GRACE_SECONDS if args.revoke_after is None else args.revoke_after)
    revoke_at = now_us() + grace * 1_000_000
    try:
        key, key_id, count = keys.rotate_key(store(config), args.project, revoke_at,
                                             sentry=args.sentry, actor=Actor.cli())
    except ValueError as exc:
        print(f"sounding: {exc}", file=sys.stderr)
        return 1
    print(f"project: {args.project}\nkey id:  {key_id}\nkey:     {key}")
    print("The key is shown once; Sounding keeps only its hash.")
    cache = config["auth"].get("cache_seconds", 10)
    if grace:
        print(f"{count} older key(s) keep working until {iso_from_us(revoke_at)} "
              f"(then within {cache} seconds they stop); "
              "'sounding keys revoke ID' ends one sooner")
    else:
        print(f"revoked {count} older key(s); running collectors stop accepting them "
              f"within {cache} seconds")
    return 0


def cmd_admin_token_rotate(config: dict[str, Any], _args: argparse.Namespace) -> int:
    if config["dashboard"].get("admin_token"):
        print("sounding: the admin token is configured (SOUNDING_ADMIN_TOKEN or "
              "dashboard.admin_token); change it there", file=sys.stderr)
        return 2
    token = shared_secrets.rotate_admin_token(store(config), Actor.cli())
    print(f"admin token: {token}\nShown once; Sounding keeps only its hash. Running "
          "collectors accept it (and log out every session) within 10 seconds.")
    return 0


def seconds(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("a number of seconds >= 0")
    return value


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    keys_p = sub.add_parser("keys", parents=[common], help="manage ingest keys")
    keys_sub = keys_p.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", parents=[common],
                                 help="create a key for a project (printed once)")
    create.add_argument("--project", required=True)
    create.add_argument("--sentry", action="store_true",
                        help="a key in Sentry's form (32 hex digits), and print the DSN")
    create.add_argument("--host", help="the host (or host:port, or URL) Sentry SDKs reach "
                        "this collector at, for the DSN; default: the configured one")
    create.set_defaults(func=cmd_create)
    keys_sub.add_parser("list", parents=[common], help="list keys by id"
                        ).set_defaults(func=cmd_list)
    revoke = keys_sub.add_parser("revoke", parents=[common], help="revoke a key by its id")
    revoke.add_argument("key_id")
    revoke.set_defaults(func=cmd_revoke)
    rotate = keys_sub.add_parser(
        "rotate", parents=[common],
        help="a new key for a project (printed once); its older keys are revoked after "
             f"a grace period ({DEFAULT_GRACE_SECONDS} s unless told)")
    rotate.add_argument("--project", required=True)
    when = rotate.add_mutually_exclusive_group()
    when.add_argument("--revoke-after", type=seconds, metavar="SECONDS",
                      help="the older keys keep working this long "
                           f"(default {DEFAULT_GRACE_SECONDS})")
    when.add_argument("--revoke-old", action="store_true",
                      help="revoke the older keys now")
    rotate.add_argument("--sentry", action="store_true",
                        help="the new key in Sentry's form (32 hex digits)")
    rotate.set_defaults(func=cmd_rotate)
    admin = sub.add_parser("admin-token", parents=[common], help="the dashboard admin token")
    admin_sub = admin.add_subparsers(dest="admin_command", required=True)
    admin_sub.add_parser("rotate", parents=[common],
                         help="replace the generated admin token (printed once)"
                         ).set_defaults(func=cmd_admin_token_rotate)
