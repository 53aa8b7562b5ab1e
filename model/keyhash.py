"""An ingest key's hash and id: what the store keeps (storage/keys.py) and what
logs name a key by (receiver/refusals.py), never the key itself."""

from __future__ import annotations

import hashlib


def hash_key(key: str) -> str:
    """SHA-256, hex. Keys are random, so a fast hash is enough."""
    return hashlib.sha256(key.encode()).hexdigest()


def key_id_of(key_hash: str) -> str:
    """The first 12 hex digits of the hash: shown by `keys list`, taken by `keys revoke`."""
    return key_hash[:12]


def key_id(key: str) -> str:
    return key_id_of(hash_key(key))
