"""`sounding keys rotate`: a new key, the project's older keys revoked now
(--revoke-old) or after a grace period (--revoke-after), against a running
collector that must follow."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

from tests.sounding.cli.conftest import Run
from tests.support.server import Server


def _key(out: str) -> tuple[str, str]:
    key = re.search(r"^key:\s+(\S+)$", out, re.MULTILINE)
    key_id = re.search(r"^key id:\s+(\w+)$", out, re.MULTILINE)
    assert key and key_id, out
    return key.group(1), key_id.group(1)


def _status(server: Server, key: str) -> int:
    return server.post("/ingest/deploys", {"git_sha": "a"}, key=key).status_code


def test_rotate_with_revoke_old_stops_the_old_keys_at_once(
        cli: Callable[..., Run], start: Callable[..., Server], db_url: str) -> None:
    old, _ = _key(cli("keys", "create", "--project", "shop", db_url=db_url).out)
    other, _ = _key(cli("keys", "create", "--project", "elsewhere").out)
    server = start(db_url, keys={}, env={"SOUNDING__AUTH__CACHE_SECONDS": "0"})
    assert _status(server, old) == 202

    rotated = cli("keys", "rotate", "--project", "shop", "--revoke-old")
    assert rotated.code == 0, rotated.err
    new, new_id = _key(rotated.out)
    assert "revoked 1 older key(s)" in rotated.out
    assert (_status(server, old), _status(server, new), _status(server, other)) == (
        401, 202, 202)
    listed = cli("keys", "list").out
    assert re.search(rf"{new_id}\s+shop\s+\S+\s+active$", listed, re.MULTILINE), listed
    assert cli("keys", "rotate", "--project", "nosuch").code == 1


def test_rotate_with_a_grace_period_keeps_the_old_key_until_then(
        cli: Callable[..., Run], start: Callable[..., Server], sqlite_url: str) -> None:
    old, old_id = _key(cli("keys", "create", "--project", "shop", db_url=sqlite_url).out)
    server = start(sqlite_url, keys={}, env={"SOUNDING__AUTH__CACHE_SECONDS": "0"})
    rotated = cli("keys", "rotate", "--project", "shop", "--revoke-after", "3")
    assert rotated.code == 0, rotated.err
    new, _ = _key(rotated.out)
    assert "1 older key(s) keep working until" in rotated.out
    assert (_status(server, old), _status(server, new)) == (202, 202)
    assert re.search(rf"{old_id}\s+shop\s+\S+\s+active until \S+Z$", cli("keys", "list").out,
                     re.MULTILINE)
    deadline = time.monotonic() + 30
    while _status(server, old) == 202:
        assert time.monotonic() < deadline, "the old key was never revoked"
        time.sleep(0.2)
    assert _status(server, new) == 202
    assert re.search(rf"{old_id}\s+shop\s+\S+\s+revoked \S+Z$", cli("keys", "list").out,
                     re.MULTILINE)


@pytest.mark.parametrize("args", [["--revoke-old", "--revoke-after", "5"],
                                  ["--revoke-after", "-1"]])
def test_rotate_refuses_contradictory_or_negative_grace(cli: Callable[..., Run],
                                                        sqlite_url: str,
                                                        args: list[str]) -> None:
    result = cli("keys", "rotate", "--project", "shop", *args, db_url=sqlite_url)
    assert result.code == 2
    assert "--revoke" in result.err
