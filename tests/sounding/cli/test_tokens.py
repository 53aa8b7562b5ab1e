"""`sounding tokens create|list|revoke` on SQLite and PostgreSQL: a token printed once and
working as made (scopes, project, account, expiry), listed, revoked; bad input refused
with the problem named."""

from __future__ import annotations

import re
from collections.abc import Callable

from model.timeutil import now_us
from storage import keys
from storage.accounts import tokens, users
from storage.store import Store
from tests.sounding.cli.conftest import Run

PASSWORD = "correct horse battery"
DAY_US = 86_400 * 1_000_000


def test_tokens_commands(cli: Callable[..., Run], db_url: str) -> None:
    store = Store(db_url)
    keys.create_key(store, "shop")
    keys.create_key(store, "blog")
    users.create(store, "ana@example.com", PASSWORD, "member", now_us())

    made = cli("tokens", "create", "--name", "ci", "--scope", "read", "--scope", "releases",
               "--project", "shop", "--user", "ana@example.com", "--expires-days", "30",
               db_url=db_url)
    assert made.code == 0, made.err
    secret = re.search(r"token:\s+(snd_\S{43})\n", made.out).group(1)  # type: ignore
    assert "kind:     personal (ana@example.com)" in made.out
    assert "scopes:   read releases" in made.out and "projects: shop" in made.out
    token = tokens.authenticate(store, secret, now_us())
    assert token is not None and token.user_id is not None
    assert token.scopes == {"read", "releases"}
    assert token.project_ids == tokens.project_ids(store, ["shop"])
    assert token.expires_us is not None and \
        29 * DAY_US < token.expires_us - now_us() <= 30 * DAY_US

    service = cli("tokens", "create", "--name", "deployer", "--scope", "admin")
    assert service.code == 0 and "kind:     service" in service.out
    assert "projects: all" in service.out and "expires:  never" in service.out

    listed = cli("tokens", "list")
    assert listed.code == 0
    rows = listed.out.splitlines()[1:]
    assert len(rows) == 2 and secret not in listed.out
    assert rows[0].split()[:5] == [str(token.id), "ci", "ana@example.com", "read,releases", "1"]
    assert "active until" in rows[0] and rows[1].split()[1:5] == ["deployer", "service",
                                                                  "admin", "all"]
    only_ana = cli("tokens", "list", "--user", "ana@example.com").out.splitlines()[1:]
    assert [r.split()[0] for r in only_ana] == [str(token.id)]

    revoked = cli("tokens", "revoke", "--id", str(token.id))
    assert revoked.code == 0 and f"revoked token {token.id}" in revoked.out
    assert tokens.authenticate(store, secret, now_us()) is None
    assert cli("tokens", "revoke", "--id", str(token.id)).code == 1  # once
    assert "revoked" in cli("tokens", "list").out.splitlines()[1]

    unknown = cli("tokens", "create", "--name", "x", "--scope", "read", "--project", "nope")
    assert unknown.code == 2 and "no project named 'nope'" in unknown.err
    nobody = cli("tokens", "create", "--name", "x", "--scope", "read", "--user", "no@example.com")
    assert nobody.code == 1 and "no account for no@example.com" in nobody.err
    assert cli("tokens", "create", "--name", "x", "--scope", "write").code == 2  # argparse
    never = cli("tokens", "create", "--name", "x", "--scope", "read", "--expires-days", "0")
    assert never.code == 2 and "in the future" in never.err
    assert len(tokens.list_tokens(store)) == 2
    store.dispose()
