"""Checks a configuration section runs on its own values, each error naming the full
key path (`receivers.http.port`), so a misspelt or wrong setting stops the collector
at start (exit 2) instead of being ignored."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from model.errors import ConfigError


def nearest(key: str, known: Iterable[str]) -> str:
    """' (did you mean port?)' for the closest known name, or ''."""
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def require_mapping(path: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{path} must be a mapping")
    return value


def check_keys(path: str, config: Mapping[str, Any], known: Mapping[str, Any]) -> None:
    """Refuse a key `known` does not have. A known key whose default is a non-empty
    mapping is checked the same way one level down; an empty one takes any keys."""
    for key, value in config.items():
        if key not in known:
            raise ConfigError(f"unknown key {join(path, str(key))}{nearest(str(key), known)}")
        default = known[key]
        if isinstance(default, dict) and default and isinstance(value, dict):
            check_keys(join(path, key), value, default)


def require_int(path: str, config: Mapping[str, Any], key: str, minimum: int = 0) -> None:
    value = config.get(key)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{join(path, key)} must be an integer >= {minimum}, got {value!r}")


def require_bool(path: str, config: Mapping[str, Any], key: str) -> None:
    if not isinstance(config.get(key, False), bool):
        raise ConfigError(f"{join(path, key)} must be true or false")


def require_str(path: str, config: Mapping[str, Any], key: str) -> None:
    value = config.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{join(path, key)} must be a string")


def require_list(path: str, config: Mapping[str, Any], key: str) -> None:
    value = config.get(key)
    if value is not None and not (isinstance(value, list)
                                  and all(isinstance(item, str) for item in value)):
        raise ConfigError(f"{join(path, key)} must be a list of strings")
