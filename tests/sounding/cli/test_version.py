"""`sounding --version` and `sounding version`: the installed distribution's version."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from tests.sounding.cli.conftest import Run

ENTRY_POINT = Path(sys.executable).parent / "sounding"


def test_both_forms_print_the_version_from_the_package_metadata(cli: Callable[..., Run]
                                                                 ) -> None:
    expected = f"sounding {metadata.version('sounding')}\n"
    for args in (["--version"], ["version"], ["version", "--config", "/nonexistent"]):
        result = cli(*args)
        assert (result.code, result.out) == (0, expected), result


def test_the_installed_command_answers_without_a_configuration(tmp_path: Path) -> None:
    # No database and a configuration file that does not exist: neither is read.
    result = subprocess.run([str(ENTRY_POINT), "version"], capture_output=True, text=True,
                            timeout=60, cwd=tmp_path,
                            env={"PATH": "/usr/bin:/bin", "SOUNDING_CONFIG": "/nonexistent"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"sounding {metadata.version('sounding')}\n"
    assert not list(tmp_path.iterdir())
