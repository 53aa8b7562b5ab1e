"""Running the command line in this process, `sounding.cli.main([...])`, with the
environment a user's shell would give it (no SOUNDING_* but the database's)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from sounding.cli import main


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture(autouse=True)
def _own_logging() -> Iterator[None]:
    """main() puts its handler on the root logger, writing to this test's captured
    stderr: taken off after the test, so that later tests do not write to it."""
    yield
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_sounding", False):
            root.removeHandler(handler)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> Callable[..., Run]:
    for name in list(os.environ):
        if name.startswith("SOUNDING"):
            monkeypatch.delenv(name)

    def run(*args: str, db_url: str | None = None, **env: str) -> Run:
        if db_url is not None:
            monkeypatch.setenv("SOUNDING_DATABASE_URL", db_url)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --version, --help, a usage error
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run
