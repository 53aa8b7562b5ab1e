"""`sounding projects create NAME | list`."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from model.timeutil import iso_from_us
from sounding.cli.common import store
from storage import projects
from storage.audit.log import Actor


def cmd_create(config: dict[str, Any], args: argparse.Namespace) -> int:
    try:
        project_id, created = projects.create_project(store(config), args.name, Actor.cli())
    except ValueError as exc:
        print(f"sounding: {exc}", file=sys.stderr)
        return 2
    if not created:
        print(f"sounding: project {args.name!r} already exists (id {project_id})",
              file=sys.stderr)
        return 1
    print(f"created project {args.name!r} (id {project_id}); give it a key with "
          f"'sounding keys create --project {args.name}'")
    return 0


def cmd_list(config: dict[str, Any], _args: argparse.Namespace) -> int:
    print(f"{'ID':<6}{'NAME':<24}{'CREATED':<30}ACTIVE KEYS")
    for row in projects.list_projects(store(config)):
        print(f"{row.id:<6}{row.name:<24}{iso_from_us(row.created_us):<30}{row.active_keys}")
    return 0


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    parser = sub.add_parser("projects", parents=[common], help="manage projects")
    projects_sub = parser.add_subparsers(dest="projects_command", required=True)
    create = projects_sub.add_parser("create", parents=[common], help="create a project")
    create.add_argument("name")
    create.set_defaults(func=cmd_create)
    projects_sub.add_parser("list", parents=[common],
                            help="list projects: id, name, created, active keys"
                            ).set_defaults(func=cmd_list)
