"""storage/keys.py: new keys are DSN-safe, the DSN of a key, and rotation with a grace
period (a revocation time still to come)."""

from __future__ import annotations

import re

import pytest

from model.timeutil import now_us
from storage import keys
from storage.store import Store


def test_new_keys_hold_word_characters_only() -> None:
    for _ in range(200):
        key = keys.new_key()
        assert re.fullmatch(r"snd_[0-9a-f]{48}", key)
        assert keys.dsn_safe(key)
        assert re.fullmatch(r"[0-9a-f]{32}", keys.new_key(sentry=True))


def test_old_keys_with_a_dash_are_not_dsn_safe() -> None:
    assert not keys.dsn_safe("snd_abc-def")
    assert not keys.dsn_safe("test-key-acme")
    assert not keys.dsn_safe("")


def test_dsn() -> None:
    assert keys.dsn("k", "http://127.0.0.1:3000", 7) == "http://k@127.0.0.1:3000/7"
    assert keys.dsn("k", "errors.example.com:3000", 7) == "http://k@errors.example.com:3000/7"
    assert keys.dsn("k", "https://errors.example.com/", 7) == "https://k@errors.example.com/7"


def test_a_key_revoked_in_the_future_is_active_until_then(store: Store) -> None:
    """keys rotate's grace period: revoked_us still to come is active, on both engines,
    in every reader of the keys (the authenticator's set, a lookup, the count)."""
    first, _ = keys.create_key(store, "shop")
    other, _ = keys.create_key(store, "elsewhere")
    soon = now_us() + 60_000_000
    second, second_id, scheduled = keys.rotate_key(store, "shop", soon)
    assert scheduled == 1
    active = keys.active_keys(store, 100)
    assert {keys.hash_key(k) for k in (first, second, other)} == set(active)
    assert keys.project_for_hash(store, keys.hash_key(first)) == keys.project_id_of(store,
                                                                                    "shop")
    assert keys.active_key_count(store) == 3
    # A later rotation with a longer grace does not extend the earlier one; a shorter
    # one (here: now) brings every older key forward.
    _third, _, scheduled = keys.rotate_key(store, "shop", soon + 60_000_000)
    assert scheduled == 1  # only the second key; the first keeps its time
    assert {r.key_id: r.revoked_us for r in keys.list_keys(store)
            if r.project == "shop"}[keys.key_id_of(keys.hash_key(first))] == soon
    assert keys.revoke_key(store, second_id) == 1  # a scheduled key is revoked now
    assert keys.project_for_hash(store, keys.hash_key(second)) is None
    _fourth, _, scheduled = keys.rotate_key(store, "shop", now_us())
    assert scheduled == 2  # the first and the third
    assert keys.project_for_hash(store, keys.hash_key(first)) is None
    assert keys.active_key_count(store) == 2  # the fourth, and elsewhere's


def test_rotating_an_unknown_project_creates_nothing(store: Store) -> None:
    with pytest.raises(ValueError, match="no project named 'nosuch'"):
        keys.rotate_key(store, "nosuch", now_us())
    assert keys.list_keys(store) == []
