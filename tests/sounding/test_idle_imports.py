"""What an idle collector imports (the footprint of a sidecar, issue 14): a collector
started on a database at the newest migration, with the dashboard off and no alert
secrets key, has imported neither Alembic nor the dashboard nor cryptography, and runs
no decode worker; the writer process has no asyncio. Each started for real, in a
process of its own (sys.modules is per process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from storage.store import Store

REPO = Path(__file__).resolve().parents[2]
COLLECTOR = """
import asyncio, json, sys
from sounding import config
from sounding.service import Service

async def main():
    service = Service(config.load(environ={
        "SOUNDING_DATABASE_URL": sys.argv[1], "SOUNDING_HTTP_HOST": "127.0.0.1",
        "SOUNDING_HTTP_PORT": "0", "SOUNDING_GRPC_PORT": "0",
        "SOUNDING__RECEIVERS__OTLP_GRPC__HOST": "127.0.0.1",
        "SOUNDING_API_KEYS": "p:idle-imports-key-0123456789",
        "SOUNDING__DASHBOARD__ENABLED": sys.argv[2]}))
    await service.start()
    try:
        ok, _ = await service.extensions["health"].check()
        pool = service.pipeline.decode_pool
        print(json.dumps({"healthy": ok, "modules": sorted(
            {m.split(".")[0] for m in sys.modules} | {m for m in sys.modules
                                                      if m.startswith("dashboard.")}),
            "workers": 0 if pool is None else len(pool._workers)}))
    finally:
        await service.shutdown()

asyncio.run(main())
"""


def _idle(url: str, dashboard: bool) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", COLLECTOR, url, str(dashboard).lower()],
                          cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _at_head(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'sounding.db'}"
    store = Store(url)
    store.upgrade()
    store.dispose()
    return url


def test_an_idle_lean_collector_imports_no_alembic_dashboard_or_cryptography(
        tmp_path: Path) -> None:
    idle = _idle(_at_head(tmp_path), dashboard=False)
    assert idle["healthy"] is True
    assert idle["workers"] == 0
    modules = idle["modules"]
    assert isinstance(modules, list)
    assert {"sqlalchemy", "tornado", "storage", "receiver"} <= set(modules)  # the probe works
    for heavy in ("alembic", "mako", "pygments", "cryptography", "dashboard.app"):
        assert heavy not in modules, heavy


def test_with_the_dashboard_on_it_is_imported(tmp_path: Path) -> None:
    modules = _idle(_at_head(tmp_path), dashboard=True)["modules"]
    assert isinstance(modules, list)
    assert "dashboard.app" in modules
    assert "alembic" not in modules


def test_the_writer_process_imports_no_event_loop() -> None:
    code = ("import sys, exporters.sql.writer; "
            "print(sorted({'asyncio', 'ssl', 'sqlalchemy'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
