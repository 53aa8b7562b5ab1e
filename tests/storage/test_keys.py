"""storage/keys.py: new keys are DSN-safe, and the DSN of a key."""

from __future__ import annotations

import re

from storage import keys


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
