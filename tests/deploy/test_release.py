"""One release version: pyproject.toml, sounding.__version__ (what /metrics'
sounding_build_info reports), the installed metadata, the newest CHANGELOG.md entry
and the image tag the Kubernetes example runs."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import sounding

REPO = Path(__file__).resolve().parents[2]


def test_every_place_names_the_same_release() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", declared)
    assert sounding.__version__ == declared
    assert version("sounding") == declared, "reinstall: make install"
    changelog = (REPO / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, re.M)
    assert releases and releases[0] == declared
    assert "## [Unreleased]" in changelog
    for manifest in (REPO / "deploy" / "kubernetes").glob("*.yaml"):
        tags = re.findall(r"image: sounding:(\S+)", manifest.read_text())
        assert tags and set(tags) == {declared}, manifest.name
