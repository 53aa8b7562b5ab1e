"""`sounding tokens create|list|revoke`: API tokens (storage/accounts/tokens.py), as the
dashboard's Tokens page makes them. `create` prints the token once; Sounding keeps
only its hash. Without --user it makes a service token (of no account)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from model.timeutil import iso_from_us, now_us
from sounding.cli.common import store
from storage.accounts import tokens, users
from storage.audit.log import Actor
from storage.store import Store

DAY_US = 86_400 * 1_000_000


def _user_id(opened: Store, email: str | None) -> tuple[bool, int | None]:
    """(whether `--user` names an account, said on stderr when not; its id, None
    without `--user`)."""
    if not email:
        return True, None
    user = users.find(opened, email)
    if user is None:
        print(f"sounding: no account for {email}", file=sys.stderr)
        return False, None
    return True, user.id


def cmd_create(config: dict[str, Any], args: argparse.Namespace) -> int:
    opened = store(config)
    found, user_id = _user_id(opened, args.user)
    if not found:
        return 1
    now = now_us()
    try:
        projects = tokens.project_ids(opened, args.project) if args.project else None
        secret, token = tokens.create(
            opened, args.name, args.scope, now, Actor.cli(), user_id, projects,
            None if args.expires_days is None else now + args.expires_days * DAY_US)
    except ValueError as exc:
        print(f"sounding: {exc}", file=sys.stderr)
        return 2
    print(f"id:       {token.id}\nkind:     {token.kind}"
          f"{f' ({token.email})' if token.email else ''}\n"
          f"scopes:   {' '.join(s for s in tokens.SCOPES if s in token.scopes)}\n"
          f"projects: {', '.join(args.project) if args.project else 'all'}\n"
          f"expires:  {iso_from_us(token.expires_us) if token.expires_us else 'never'}\n"
          f"token:    {secret}")
    print("The token is shown once; Sounding keeps only its hash.")
    return 0


def cmd_list(config: dict[str, Any], args: argparse.Namespace) -> int:
    opened = store(config)
    found, user_id = _user_id(opened, args.user)
    if not found:
        return 1
    now = now_us()
    print(f"{'ID':<6}{'NAME':<20}{'OWNER':<30}{'SCOPES':<28}{'PROJECTS':<10}"
          f"{'LAST USED':<30}STATUS")
    for t in tokens.list_tokens(opened, user_id):
        owner = t.email or "service"
        scopes = ",".join(s for s in tokens.SCOPES if s in t.scopes)
        reach = "all" if t.project_ids is None else str(len(t.project_ids))
        used = iso_from_us(t.last_used_us) if t.last_used_us else "never"
        state = t.state(now)
        if state == "active" and t.expires_us:
            state = f"active until {iso_from_us(t.expires_us)}"
        print(f"{t.id:<6}{t.name[:19]:<20}{owner[:29]:<30}{scopes:<28}{reach:<10}"
              f"{used:<30}{state}")
    return 0


def cmd_revoke(config: dict[str, Any], args: argparse.Namespace) -> int:
    if not tokens.revoke(store(config), args.id, now_us(), Actor.cli()):
        print(f"sounding: no active token with id {args.id}", file=sys.stderr)
        return 1
    print(f"revoked token {args.id}; it is refused from its next request")
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("tokens", parents=[common], help="manage API tokens")
    cmds = parser.add_subparsers(dest="tokens_command", required=True)
    create = cmds.add_parser("create", parents=[common],
                             help="make an API token (printed once)")
    create.add_argument("--name", required=True)
    create.add_argument("--scope", action="append", required=True, choices=tokens.SCOPES,
                        help="repeat for several")
    create.add_argument("--project", action="append", default=[], metavar="NAME",
                        help="limit the token to this project (repeat for several; "
                             "none: all projects)")
    create.add_argument("--user", metavar="EMAIL",
                        help="a personal token of this account (none: a service token)")
    create.add_argument("--expires-days", type=int, metavar="DAYS",
                        help="expire after this many days (none: never)")
    create.set_defaults(func=cmd_create)
    listing = cmds.add_parser("list", parents=[common], help="list API tokens")
    listing.add_argument("--user", metavar="EMAIL", help="only this account's")
    listing.set_defaults(func=cmd_list)
    revoke = cmds.add_parser("revoke", parents=[common], help="revoke an API token")
    revoke.add_argument("--id", type=int, required=True)
    revoke.set_defaults(func=cmd_revoke)
