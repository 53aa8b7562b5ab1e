"""Sealing the secrets of alert destinations made on the dashboard (a webhook's URL
and secret, a Slack URL, an SMTP password) before they reach the database.

The key is derived from `alerts.secrets_key` (a configured string of 32+ characters,
shared by every collector on one database through their configuration, never
stored) with HKDF-SHA256. A sealed value is

    version (1 byte) | key id (8 bytes) | nonce (12 bytes) | AES-256-GCM ciphertext+tag

The key id (a hash of the derived key, not the key) lets `open` tell "sealed under
another key" (the configured key changed) from "altered": both refuse, neither
returns garbage. The caller's `context` (the project and destination name) is bound
as associated data, so a sealed value copied onto another row does not open there.
"""

from __future__ import annotations

import hashlib
import os

VERSION = b"\x01"
KEY_ID_BYTES = 8
NONCE_BYTES = 12
MIN_KEY_CHARS = 32
_INFO = b"sounding alerts secretbox v1"
_HEADER = len(VERSION) + KEY_ID_BYTES + NONCE_BYTES


class SealError(Exception):
    """A sealed value that does not open: `wrong_key` tells which case."""

    def __init__(self, message: str, wrong_key: bool) -> None:
        super().__init__(message)
        self.wrong_key = wrong_key


def key_id_of(sealed: bytes) -> bytes | None:
    """The key id a sealed value was made under, None when it is not one."""
    if len(sealed) < _HEADER or sealed[:1] != VERSION:
        return None
    return sealed[1:1 + KEY_ID_BYTES]


class SecretBox:
    def __init__(self, secrets_key: str) -> None:
        if len(secrets_key) < MIN_KEY_CHARS:
            raise ValueError(f"the secrets key must be at least {MIN_KEY_CHARS} characters")
        # cryptography here, not at the top: built only with alerts.secrets_key, and a
        # collector without one (a sidecar) is 7 MB lighter without it.
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        self._key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                         info=_INFO).derive(secrets_key.encode())
        self.key_id = hashlib.sha256(b"key id\n" + self._key).digest()[:KEY_ID_BYTES]

    def __repr__(self) -> str:  # never the key, even in a traceback
        return f"SecretBox(key id {self.key_id.hex()})"

    def seal(self, plaintext: bytes, context: str) -> bytes:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        nonce = os.urandom(NONCE_BYTES)  # random per value: 2**-32 collisions at 2**32 seals
        sealed = AESGCM(self._key).encrypt(nonce, plaintext, context.encode())
        return VERSION + self.key_id + nonce + sealed

    def open(self, sealed: bytes, context: str) -> bytes:
        key_id = key_id_of(sealed)
        if key_id is None:
            raise SealError("not a sealed value", wrong_key=False)
        if key_id != self.key_id:
            raise SealError("sealed under another alerts.secrets_key", wrong_key=True)
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        nonce = sealed[1 + KEY_ID_BYTES:_HEADER]
        try:
            return AESGCM(self._key).decrypt(nonce, sealed[_HEADER:], context.encode())
        except InvalidTag as exc:
            raise SealError("the sealed value was altered or belongs to another row",
                            wrong_key=False) from exc
