"""The checks every factory runs on its section: full key paths, nearest names."""

from __future__ import annotations

import pytest

from model.errors import ConfigError
from runtime.configcheck import check_keys, nearest, require_bool, require_int, require_list


def test_nearest_names_a_close_key_and_nothing_for_a_far_one() -> None:
    assert nearest("prot", ["host", "port"]) == " (did you mean port?)"
    assert nearest("zzzz", ["host", "port"]) == ""


def test_unknown_keys_are_found_one_level_down_unless_the_default_is_empty() -> None:
    known = {"a": {"b": 1}, "free": {}}
    check_keys("x", {"a": {"b": 2}, "free": {"anything": 1}}, known)
    with pytest.raises(ConfigError, match=r"^unknown key x\.a\.c$"):
        check_keys("x", {"a": {"c": 2}}, known)
    with pytest.raises(ConfigError, match=r"^unknown key x\.fre \(did you mean free\?\)$"):
        check_keys("x", {"fre": {}}, known)


def test_values_are_checked_with_their_path() -> None:
    require_int("r", {"port": None}, "port")  # unset: the default applies
    with pytest.raises(ConfigError, match=r"r\.port must be an integer >= 0, got True"):
        require_int("r", {"port": True}, "port")
    with pytest.raises(ConfigError, match=r"r\.on must be true or false"):
        require_bool("r", {"on": "yes"}, "on")
    with pytest.raises(ConfigError, match=r"r\.origins must be a list of strings"):
        require_list("r", {"origins": "https://a"}, "origins")
