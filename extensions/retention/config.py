"""The `retention:` section: its defaults and checks, each error naming the key.

Durations are written "7d", "12h", "30m", "45s" or as whole seconds; 0 or "off"
keeps for ever. `projects.<name>.<signal>` overrides a signal for one project.
"""

from __future__ import annotations

import re
from typing import Any

from model.errors import ConfigError
from runtime.configcheck import check_keys, join, nearest, require_bool, require_mapping

# The signals a setting applies to, in storage/retention/sweep.py's SIGNALS.
RETAINED_SIGNALS = ("spans", "logs", "metric_points", "error_occurrences", "rollups", "deploys",
                    "check_ins")

DEFAULTS: dict[str, Any] = {
    "enabled": True,
    # Chosen for a small disk. Raw spans, logs and points are most of the bytes; an
    # occurrence list a month back covers a release cycle; the rollups are small and
    # feed the performance graph's 90 days; deploys are tiny and mark a year of graphs.
    "spans": "7d",
    "logs": "7d",
    "metric_points": "7d",
    "error_occurrences": "30d",
    "rollups": "90d",
    "deploys": "365d",
    # Cron monitors' check-ins (their monitors and incidents stay): a month of runs.
    "check_ins": "30d",
    # The audit log (storage/audit/), for every project at once: a year of who changed
    # what covers the reviews that ask for it; its rows are small and few.
    "audit_log": "365d",
    "sweep_every_seconds": 300,
    "batch_rows": 5000,  # rows per delete transaction
    # Uploaded source maps: a project keeps those of its newest this many releases,
    # and of every release that still has errors (storage/retention/artifacts.py).
    "source_map_releases": 10,
    # {<project name>: {<signal>: <duration>}}
    "projects": {},
}

_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}
_DURATION = re.compile(r"(\d+)\s*([dhms]?)")


def seconds(path: str, value: Any) -> int:
    """A duration in seconds; 0 for "off" (keep for ever)."""
    if value is False:  # YAML reads a bare `off` (or `no`) as false
        return 0
    if isinstance(value, bool):
        raise ConfigError(f"{path} must be a duration such as 7d, 12h, 30m, 45s, a number "
                          f"of seconds, or off; got {value!r}")
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "off":
            return 0
        match = _DURATION.fullmatch(text)
        if match:
            return int(match.group(1)) * _UNITS[match.group(2) or "s"]
    raise ConfigError(f"{path} must be a duration such as 7d, 12h, 30m, 45s, a number of "
                      f"seconds, or off; got {value!r}")


def _positive_int(path: str, value: Any, maximum: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (
            maximum is not None and value > maximum):
        bound = f"from 1 to {maximum}" if maximum else ">= 1"
        raise ConfigError(f"{path} must be an integer {bound}, got {value!r}")


def check(path: str, config: dict[str, Any]) -> None:
    check_keys(path, config, DEFAULTS)
    require_bool(path, config, "enabled")
    for signal in RETAINED_SIGNALS:
        seconds(join(path, signal), config.get(signal))
    seconds(join(path, "audit_log"), config.get("audit_log"))
    _positive_int(join(path, "sweep_every_seconds"), config.get("sweep_every_seconds"))
    # Past this a batch holds SQLite's write lock for too long (and its rollup key
    # deletes would pass SQLite's limit of bound values in one statement).
    _positive_int(join(path, "batch_rows"), config.get("batch_rows"), 100_000)
    _positive_int(join(path, "source_map_releases"), config.get("source_map_releases"))
    projects = require_mapping(join(path, "projects"), config.get("projects"))
    for name, overrides in projects.items():
        project_path = join(join(path, "projects"), str(name))
        for signal, value in require_mapping(project_path, overrides).items():
            if signal not in RETAINED_SIGNALS:
                raise ConfigError(f"unknown key {join(project_path, str(signal))}"
                                  f"{nearest(str(signal), RETAINED_SIGNALS)}")
            seconds(join(project_path, str(signal)), value)


def policy_values(config: dict[str, Any]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """(seconds per signal, {project: seconds per signal it overrides}) of a checked
    section."""
    defaults = {signal: seconds(signal, config[signal]) for signal in RETAINED_SIGNALS}
    projects = {str(name): {str(signal): seconds(str(signal), value)
                            for signal, value in (overrides or {}).items()}
                for name, overrides in (config.get("projects") or {}).items()}
    return defaults, projects
