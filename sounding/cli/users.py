"""`sounding users create|list|set-role|set-password|disable|enable|delete`: team
accounts of the dashboard (storage/accounts/users.py). A password is read from a prompt (not
echoed) or, for scripts, from standard input with --password-stdin: never from the
command line, where other users of the machine and the shell's history would see it.
Each change is recorded in the audit log as made by the command line (Actor.cli)."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from model.timeutil import iso_from_us, now_us
from sounding.cli.common import store
from storage.accounts import project_roles, users
from storage.audit.log import Actor


def read_password(args: argparse.Namespace) -> str:
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Again: ") != first:
        raise ValueError("the two passwords differ")
    return first


def cmd_create(config: dict[str, Any], args: argparse.Namespace) -> int:
    try:
        user = users.create(store(config), args.email, read_password(args), args.role,
                            now_us(), Actor.cli())
    except ValueError as exc:
        print(f"sounding: {exc}", file=sys.stderr)
        return 2
    print(f"created {user.email} ({user.role}); they log in at the dashboard's /login")
    return 0


def cmd_list(config: dict[str, Any], _args: argparse.Namespace) -> int:
    print(f"{'EMAIL':<40}{'ROLE':<9}{'CREATED':<30}{'STATUS':<40}IN PROJECTS")
    opened = store(config)
    in_projects = project_roles.all_named(opened)
    for user in users.list_users(opened):
        state = "active" if user.disabled_us is None else \
            f"disabled {iso_from_us(user.disabled_us)}"
        roles = " ".join(f"{p}:{r}" for p, r in in_projects.get(user.id, {}).items())
        print(f"{user.email:<40}{user.role:<9}{iso_from_us(user.created_us):<30}{state:<40}"
              f"{roles}".rstrip())
    return 0


def _report(found: bool, email: str, done: str) -> int:
    if not found:
        print(f"sounding: no account for {email}", file=sys.stderr)
        return 1
    print(f"{email}: {done}")
    return 0


def cmd_set_role(config: dict[str, Any], args: argparse.Namespace) -> int:
    if args.project is None:
        return _report(users.set_role(store(config), args.email, args.role, Actor.cli()),
                       args.email, f"role {args.role}")
    try:
        found = project_roles.set_role(store(config), args.email, args.project, args.role,
                                       Actor.cli())
    except ValueError as exc:
        print(f"sounding: {exc}", file=sys.stderr)
        return 2
    done = (f"no role of its own in {args.project} (its global role there)"
            if args.role == "none" else f"role {args.role} in {args.project}")
    return _report(found, args.email, done)


def cmd_set_password(config: dict[str, Any], args: argparse.Namespace) -> int:
    try:
        found = users.set_password(store(config), args.email, read_password(args),
                                   Actor.cli())
    except ValueError as exc:
        print(f"sounding: {exc}", file=sys.stderr)
        return 2
    return _report(found, args.email, "password changed; their sessions ended")


def cmd_disable(config: dict[str, Any], args: argparse.Namespace) -> int:
    return _report(users.disable(store(config), args.email, now_us(), Actor.cli()), args.email,
                   "disabled; their sessions ended and their tokens stop working")


def cmd_enable(config: dict[str, Any], args: argparse.Namespace) -> int:
    return _report(users.enable(store(config), args.email, Actor.cli()), args.email, "enabled")


def cmd_delete(config: dict[str, Any], args: argparse.Namespace) -> int:
    return _report(users.delete_user(store(config), args.email, Actor.cli()), args.email,
                   "deleted, with their sessions and tokens")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("users", parents=[common], help="manage dashboard accounts")
    cmds = parser.add_subparsers(dest="users_command", required=True)

    def command(name: str, func: Any, help_text: str, role: bool = False,
                password: bool = False) -> argparse.ArgumentParser:
        p = cmds.add_parser(name, parents=[common], help=help_text)
        if name != "list":
            p.add_argument("--email", required=True)
        if role:
            p.add_argument("--role", required=True, choices=users.ROLES)
        if password:
            p.add_argument("--password-stdin", action="store_true",
                           help="read the password from the first line of standard input")
        p.set_defaults(func=func)
        return p

    command("create", cmd_create, "add an account (password prompted)", role=True,
            password=True)
    command("list", cmd_list, "list accounts")
    set_role = command("set-role", cmd_set_role, "change an account's role (across all "
                       "projects, or in one with --project)", role=True)
    set_role.add_argument("--project", help="the project to set the role in (none: remove "
                          "the account's role there, leaving its global one)")
    command("set-password", cmd_set_password, "change an account's password (ends its "
            "sessions)", password=True)
    command("disable", cmd_disable, "disable an account (ends its sessions)")
    command("enable", cmd_enable, "enable a disabled account")
    command("delete", cmd_delete, "delete an account, its sessions and tokens")
