"""`sounding projects create NAME | list`, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from tests.sounding.cli.conftest import Run


def test_create_then_list_with_active_key_counts(cli: Callable[..., Run], db_url: str) -> None:
    created = cli("projects", "create", "shop", db_url=db_url)
    assert created.code == 0, created.err
    assert re.search(r"created project 'shop' \(id \d+\)", created.out)
    assert cli("projects", "create", "shop").code == 1  # already there: said, not doubled
    assert cli("projects", "create", " ").code == 2
    assert cli("keys", "create", "--project", "shop").code == 0
    assert cli("keys", "create", "--project", "shop").code == 0
    assert cli("keys", "create", "--project", "api").code == 0  # a project made by its key
    revoked = re.search(r"key id:\s+(\w+)", cli("keys", "create", "--project", "api").out)
    assert revoked is not None
    assert cli("keys", "revoke", revoked.group(1)).code == 0

    listed = cli("projects", "list")
    assert listed.code == 0, listed.err
    header, *rows = listed.out.splitlines()
    assert header.split() == ["ID", "NAME", "CREATED", "ACTIVE", "KEYS"]
    fields = [row.split() for row in rows]
    assert [(name, count) for _id, name, _created, count in fields] == [("api", "1"),
                                                                          ("shop", "2")]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", created) for _i, _n, created, _c
               in fields)


def test_config_is_taken_before_or_after_every_subcommand(cli: Callable[..., Run],
                                                         tmp_path: Path, sqlite_url: str
                                                         ) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(f"storage:\n  url: {sqlite_url}\n")
    assert cli("--config", str(path), "projects", "create", "a").code == 0
    assert cli("projects", "--config", str(path), "create", "b").code == 0
    assert cli("projects", "create", "c", "--config", str(path)).code == 0
    listed = cli("projects", "list", "--config", str(path))
    assert [row.split()[1] for row in listed.out.splitlines()[1:]] == ["a", "b", "c"]
