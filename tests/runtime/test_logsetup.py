"""The log's form (runtime/logsetup.py): `logging.format: json` is one JSON object
per line, from the collector (its own loggers, Tornado's) and from its child
processes, which log as the collector that started them."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from runtime import channel, logsetup
from runtime.supervisor import Supervisor
from tests.support.server import REPO

ENTRY_POINT = Path(sys.executable).parent / "sounding"
FIELDS = {"time", "level", "logger", "message"}


@pytest.fixture
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)
    logsetup._current.update(format="text", level="INFO")


def _json_lines(text: str) -> list[dict[str, Any]]:
    entries = []
    for line in text.splitlines():
        entry = json.loads(line)  # every line: a JSON object, or this fails
        assert isinstance(entry, dict) and FIELDS <= entry.keys(), line
        entries.append(entry)
    return entries


def test_the_collector_logs_json_lines_from_every_logger(sqlite_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOUNDING")}
    env.update({"SOUNDING_DATABASE_URL": sqlite_url, "SOUNDING_HTTP_HOST": "127.0.0.1",
                "SOUNDING_HTTP_PORT": "0", "SOUNDING_GRPC_PORT": "0",
                "SOUNDING__RECEIVERS__OTLP_GRPC__HOST": "127.0.0.1",
                "SOUNDING_API_KEYS": "acme:json-test-key", "SOUNDING_LOG_FORMAT": "json",
                # Tornado's access log on, so that a library's logger is in it too.
                "SOUNDING_ACCESS_LOG": "true"})
    proc = subprocess.Popen([str(ENTRY_POINT), "serve"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().strip().removeprefix("Sounding listening on ")
        assert base.startswith("http://"), base
        assert requests.post(base + "/ingest/deploys", json={"git_sha": "a"},
                             headers={"Authorization": "Bearer wrong"},
                             timeout=10).status_code == 401
        assert requests.get(base + "/health", timeout=10).status_code == 200
        time.sleep(0.2)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    entries = _json_lines(err)
    loggers = {entry["logger"] for entry in entries}
    assert {"sounding", "sounding.refused", "tornado.access"} <= loggers, entries
    refused = next(e for e in entries if e["logger"] == "sounding.refused")
    assert refused["level"] == "INFO"
    assert refused["message"].startswith("refused 401 on deploys: ")
    assert entries[-1]["message"] == "stopped"
    assert all(e["time"].endswith("Z") for e in entries)


def test_an_exception_is_one_line_with_its_traceback_as_a_field(
        restored_logging: None, capfd: pytest.CaptureFixture[str]) -> None:
    logsetup.configure(fmt="json")
    try:
        raise KeyError("the reason\nover two lines")
    except KeyError:
        logging.getLogger("sounding.test").exception("it failed:\n%s", "detail")
    (entry,) = _json_lines(capfd.readouterr().err)
    assert (entry["level"], entry["logger"]) == ("ERROR", "sounding.test")
    assert entry["message"] == "it failed:\ndetail"
    assert entry["exception"].startswith("Traceback (most recent call last):")
    assert "KeyError" in entry["exception"]


def test_a_child_process_logs_as_the_collector_that_started_it(
        restored_logging: None, capfd: pytest.CaptureFixture[str]) -> None:
    logsetup.configure(fmt="json")
    items: list[channel.Item] = []
    child = Supervisor("test child", "tests.runtime.supervised_child",
                       lambda: {"log": "hello"}, on_item=items.append,
                       on_exit=lambda _code: None)

    async def run() -> None:
        await child.start()
        await child.shutdown()

    asyncio.run(run())
    entries = _json_lines(capfd.readouterr().err)
    said = [e for e in entries if e["logger"] == "child"]
    assert len(said) == 1, entries
    assert said[0]["message"] == "child says hello"
    assert "ValueError: a failure in the child" in said[0]["exception"]


def test_text_is_the_default_and_a_bad_format_is_refused(
        restored_logging: None, capfd: pytest.CaptureFixture[str]) -> None:
    from sounding import config
    assert config.load(environ={})["logging"]["format"] == "text"
    with pytest.raises(Exception, match="logging.format must be text or json"):
        config.load(environ={"SOUNDING_LOG_FORMAT": "xml"})
    logsetup.configure()
    logging.getLogger("sounding.test").warning("plain")
    assert capfd.readouterr().err.endswith(" WARNING sounding.test: plain\n")
