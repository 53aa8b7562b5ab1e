"""The `retention:` section (extensions/retention/config.py): defaults,
durations, per-project overrides, the generic environment override, and errors
that name the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from extensions.retention.config import policy_values, seconds
from model.errors import ConfigError
from sounding import config


def load(tmp_path: Path, text: str = "", **env: str) -> dict[str, object]:
    path = tmp_path / "sounding.yaml"
    path.write_text(text)
    return config.load(path, environ=env)


def test_defaults_for_a_small_disk(tmp_path: Path) -> None:
    defaults, projects = policy_values(load(tmp_path)["retention"])  # type: ignore[arg-type]
    day = 86400
    assert defaults == {"spans": 7 * day, "logs": 7 * day, "metric_points": 7 * day,
                        "error_occurrences": 30 * day, "rollups": 90 * day,
                        "deploys": 365 * day, "check_ins": 30 * day}
    assert projects == {}


@pytest.mark.parametrize(("value", "expected"), [
    ("7d", 604800), ("12h", 43200), ("30m", 1800), ("45s", 45), (90, 90), ("90", 90),
    (0, 0), ("off", 0), ("OFF", 0), ("0", 0), (False, 0)])
def test_durations(value: object, expected: int) -> None:
    assert seconds("retention.spans", value) == expected


def test_per_project_overrides_and_the_environment(tmp_path: Path) -> None:
    section = load(tmp_path, "retention:\n  projects:\n    shop:\n      spans: 2d\n"
                   "      logs: off\n", SOUNDING__RETENTION__SPANS="3d",
                   SOUNDING__RETENTION__SWEEP_EVERY_SECONDS="60")["retention"]
    defaults, projects = policy_values(section)  # type: ignore[arg-type]
    assert defaults["spans"] == 3 * 86400 and projects == {"shop": {"spans": 2 * 86400,
                                                                    "logs": 0}}
    assert section["sweep_every_seconds"] == 60  # type: ignore[index]


@pytest.mark.parametrize(("text", "named"), [
    ("retention:\n  spans: 7 days\n", "retention.spans must be a duration"),
    ("retention:\n  logs: -1\n", "retention.logs must be a duration"),
    ("retention:\n  deploys: true\n", "retention.deploys must be a duration"),
    ("retention:\n  span: 7d\n", "unknown key retention.span (did you mean spans?)"),
    ("retention:\n  projects:\n    shop:\n      spanz: 1d\n",
     "unknown key retention.projects.shop.spanz (did you mean spans?)"),
    ("retention:\n  projects:\n    shop:\n      rollups: soon\n",
     "retention.projects.shop.rollups must be a duration"),
    ("retention:\n  projects:\n    shop: 7d\n", "retention.projects.shop must be a mapping"),
    ("retention:\n  batch_rows: 0\n", "retention.batch_rows must be an integer from 1"),
    ("retention:\n  sweep_every_seconds: fast\n",
     "retention.sweep_every_seconds must be an integer >= 1"),
    ("retention:\n  enabled: maybe\n", "retention.enabled must be true or false"),
])
def test_errors_name_the_key(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        load(tmp_path, text)
