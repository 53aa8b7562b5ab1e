"""The webhook signature: the documented recipe, written out here with hmac alone,
verifies what `sign` makes; a tampered body, another secret, or a timestamp more than
five minutes away does not verify."""

from __future__ import annotations

import hashlib
import hmac

from extensions.alerts.signature import sign, verify

SECRET = "a-secret-of-16-chars-or-more"
BODY = b'{"id":"abc","kind":"new_group"}'
T = 1_767_323_045


def recipe(secret: str, body: bytes, header: str, now: int) -> bool:
    """docs/alerts.md, verifying a webhook: what a receiver writes."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    expected = hmac.new(secret.encode(), parts["t"].encode() + b"." + body,
                        hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"]) and abs(now - int(parts["t"])) <= 300


def test_the_documented_recipe_verifies_the_header() -> None:
    header = sign(SECRET, BODY, T)
    assert header.startswith(f"t={T},v1=")
    assert recipe(SECRET, BODY, header, T + 10)
    assert verify(SECRET, BODY, header, T + 10)


def test_a_tampered_body_does_not_verify() -> None:
    header = sign(SECRET, BODY, T)
    tampered = BODY.replace(b"new_group", b"regression")
    assert not recipe(SECRET, tampered, header, T)
    assert not verify(SECRET, tampered, header, T)


def test_another_secret_does_not_verify() -> None:
    header = sign(SECRET, BODY, T)
    assert not verify("another-secret-of-16-chars", BODY, header, T)


def test_a_timestamp_older_than_five_minutes_is_refused() -> None:
    header = sign(SECRET, BODY, T)
    assert verify(SECRET, BODY, header, T + 300)
    assert not verify(SECRET, BODY, header, T + 301)
    assert not recipe(SECRET, BODY, header, T + 301)


def test_a_timestamp_from_the_future_is_refused() -> None:
    assert not verify(SECRET, BODY, sign(SECRET, BODY, T + 301), T)


def test_a_moved_timestamp_does_not_verify() -> None:
    # A replay with a fresh t: the signature covers t, so it no longer matches.
    v1 = sign(SECRET, BODY, T).split("v1=")[1]
    assert not verify(SECRET, BODY, f"t={T + 600},v1={v1}", T + 600)


def test_any_of_several_v1_values_verifies() -> None:
    header = sign(SECRET, BODY, T)
    assert verify(SECRET, BODY, f"{header},v1={'0' * 64}", T)
    assert verify(SECRET, BODY, f"t={T},v1={'0' * 64},{header.split(',')[1]}", T)


def test_malformed_headers_do_not_verify() -> None:
    for header in ("", "t=,v1=", f"t={T}", "v1=abc", f"t=x{T},v1=abc", f"t={T},v1=é",
                   "garbage"):
        assert not verify(SECRET, BODY, header, T), header
