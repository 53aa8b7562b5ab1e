"""The `crons:` section: its defaults and checks, each error naming the key."""

from __future__ import annotations

from typing import Any

from model.errors import ConfigError
from runtime.configcheck import check_keys, join, require_bool

DEFAULTS: dict[str, Any] = {
    "enabled": True,
    # How often the checker looks for missed check-ins and timeouts: a check-in
    # missed is noticed at most this long after its margin ends (documented as
    # within 60 s), and a turn with nothing due costs three indexed reads.
    "check_every_s": 10.0,
}
MAX_CHECK_EVERY_S = 50.0  # past this the 60 s promise of docs/crons.md breaks


def check(path: str, config: dict[str, Any]) -> None:
    check_keys(path, config, DEFAULTS)
    require_bool(path, config, "enabled")
    every = config.get("check_every_s")
    if isinstance(every, bool) or not isinstance(every, int | float) or not (
            0 < every <= MAX_CHECK_EVERY_S):
        raise ConfigError(f"{join(path, 'check_every_s')} must be a number of seconds above 0 "
                          f"and at most {MAX_CHECK_EVERY_S:.0f}, got {every!r}")
