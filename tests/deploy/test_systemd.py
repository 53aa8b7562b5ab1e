"""deploy/systemd/sounding.service, checked by systemd's own `systemd-analyze verify`
(unknown keys, bad values, a missing executable). With CI=true it must run: the
Makefile's test-deps installs Debian's systemd package when it is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "deploy" / "systemd" / "sounding.service"
INSTALLED = "/opt/sounding/bin/sounding"


def _analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("systemd-analyze is missing: make test-deps installs it")
        pytest.skip("systemd-analyze is not installed (Debian: apt-get install systemd)")
    return found


def _verify(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    # verify checks that ExecStart exists: point it at this checkout's real command.
    unit = tmp_path / "sounding.service"
    unit.write_text(text.replace(INSTALLED, str(Path(sys.executable).with_name("sounding"))))
    return subprocess.run([_analyze(), "verify", str(unit)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


def test_the_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    text = UNIT.read_text()
    assert f"ExecStart={INSTALLED} serve" in text
    done = _verify(tmp_path, text)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr  # a warning is a failure too


def test_a_misspelt_setting_would_be_caught(tmp_path: Path) -> None:
    done = _verify(tmp_path, UNIT.read_text().replace("ProtectClock=", "ProtectClok="))
    assert "Unknown key 'ProtectClok'" in done.stderr


def test_the_unit_runs_unprivileged_hardened_and_restarts_on_failure() -> None:
    settings = {}
    for line in UNIT.read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            settings.setdefault(key, []).append(value)
    assert settings["DynamicUser"] == ["yes"]
    assert settings["StateDirectory"] == ["sounding"]
    assert settings["Restart"] == ["on-failure"]
    assert settings["EnvironmentFile"] == ["-/etc/sounding/sounding.env"]
    assert "SOUNDING_DATABASE_URL=sqlite:////var/lib/sounding/sounding.db" in settings[
        "Environment"]
    for key in ("NoNewPrivileges", "ProtectHome", "PrivateTmp", "RestrictSUIDSGID"):
        assert settings[key] == ["yes"], key
    assert settings["ProtectSystem"] == ["strict"]
    assert settings["CapabilityBoundingSet"] == [""]
