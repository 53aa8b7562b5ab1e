"""secretbox: a sealed value opens under its key and context only; another key is
told apart from an alteration; the key never shows."""

from __future__ import annotations

import pytest

from extensions.alerts.secretbox import SealError, SecretBox, key_id_of

KEY = "k" * 16 + "0123456789abcdef"
OTHER = "z" * 32


def test_a_sealed_value_opens_to_what_was_sealed() -> None:
    box = SecretBox(KEY)
    sealed = box.seal(b'{"secret": "s3cr3t-value-here"}', "ctx")
    assert b"s3cr3t" not in sealed
    assert box.open(sealed, "ctx") == b'{"secret": "s3cr3t-value-here"}'
    # The same key string on another collector opens it too.
    assert SecretBox(KEY).open(sealed, "ctx") == b'{"secret": "s3cr3t-value-here"}'


def test_two_seals_of_one_value_differ() -> None:
    box = SecretBox(KEY)
    assert box.seal(b"same", "ctx") != box.seal(b"same", "ctx")


@pytest.mark.parametrize("position", [0, 1, 9, 21, -1])
def test_an_altered_byte_is_refused_not_garbage(position: int) -> None:
    box = SecretBox(KEY)
    sealed = bytearray(box.seal(b"payload", "ctx"))
    sealed[position] ^= 0x01
    with pytest.raises(SealError) as refused:
        box.open(bytes(sealed), "ctx")
    # Only a change inside the key id reads as another key.
    assert refused.value.wrong_key == (1 <= position < 9)


def test_another_context_does_not_open() -> None:
    box = SecretBox(KEY)
    with pytest.raises(SealError) as refused:
        box.open(box.seal(b"payload", "project 1/ops"), "project 2/ops")
    assert not refused.value.wrong_key


def test_a_wrong_key_is_detected_as_such() -> None:
    sealed = SecretBox(KEY).seal(b"payload", "ctx")
    with pytest.raises(SealError) as refused:
        SecretBox(OTHER).open(sealed, "ctx")
    assert refused.value.wrong_key
    assert "another alerts.secrets_key" in str(refused.value)
    assert key_id_of(sealed) == SecretBox(KEY).key_id != SecretBox(OTHER).key_id


def test_short_or_truncated_input_is_refused() -> None:
    with pytest.raises(ValueError):
        SecretBox("short")
    box = SecretBox(KEY)
    with pytest.raises(SealError):
        box.open(b"\x01abc", "ctx")
    with pytest.raises(SealError):
        box.open(box.seal(b"payload", "ctx")[:-1], "ctx")


def test_the_key_never_shows() -> None:
    box = SecretBox(KEY)
    assert KEY not in repr(box) and KEY not in str(vars(box) if hasattr(box, "__dict__")
                                                   else "")
