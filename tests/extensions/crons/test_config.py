"""The `crons:` section (extensions/crons/config.py): defaults, and each bad value
refused at start naming its key."""

from __future__ import annotations

from typing import Any

import pytest

from extensions.crons import config
from model.errors import ConfigError


def test_the_defaults_are_valid() -> None:
    config.check("crons", dict(config.DEFAULTS))


@pytest.mark.parametrize(("changes", "named"), [
    ({"check_every_s": 0}, "crons.check_every_s"),
    ({"check_every_s": 61}, "crons.check_every_s"),
    ({"check_every_s": "10"}, "crons.check_every_s"),
    ({"check_every_s": True}, "crons.check_every_s"),
    ({"enabled": "yes"}, "crons.enabled"),
    ({"check_every": 5}, "crons.check_every"),
])
def test_bad_values_name_their_key(changes: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace(".", r"\.")):
        config.check("crons", {**config.DEFAULTS, **changes})
