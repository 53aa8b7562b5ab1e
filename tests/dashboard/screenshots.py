"""Regenerate docs/screenshots/: a seeded collector, Chromium, one PNG per main page.

    .venv/bin/python -m tests.dashboard.screenshots
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from tests.dashboard.conftest import CHROMIUM, CHROMIUM_ARGS, login
from tests.dashboard.data import ADMIN_TOKEN
from tests.dashboard.demo import seed
from tests.dashboard.demo_metrics import seed_metrics
from tests.support.server import REPO, start_server

OUT = REPO / "docs" / "screenshots"


TEAM = (("maria@shop.example", "admin"), ("dev@shop.example", "member"),
        ("support@shop.example", "viewer"))


def add_team(page: Any, base: str) -> None:
    """Three accounts, through the Users page as an admin adds them."""
    page.goto(base + "/users")
    for email, role in TEAM:
        form = page.locator("form.add-user")
        form.locator("input[name=email]").fill(email)
        form.locator("input[name=password]").fill("demo password 1234")
        form.locator("select[name=role]").select_option(role)
        form.locator("#add-user").click()
        page.wait_for_load_state()


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        # "new-app" has a key and no data: its pages show how to send some.
        server = start_server(f"sqlite:///{Path(tmp) / 'demo.db'}",
                              keys={"shop": "demo-key", "new-app": "demo-key-new"},
                              env={"SOUNDING_ADMIN_TOKEN": ADMIN_TOKEN})
        try:
            trace_id = seed(server)["trace_id"]
            seed_metrics(server)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                     args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                login(page, server.base)
                add_team(page, server.base)
                group = server.query("SELECT id FROM error_groups "
                                     "WHERE fingerprint = 'timeout-payments'")[0][0]
                stack_group = server.query("SELECT id FROM error_groups "
                                           "WHERE exception_class LIKE '%TaxError'")[0][0]
                for name, path in (
                        ("errors", "/projects/shop/errors"),
                        ("error-group", f"/projects/shop/errors/{group}"),
                        ("error-stack", f"/projects/shop/errors/{stack_group}"),
                        ("performance", "/projects/shop/performance?range=24h"),
                        ("deploys", "/projects/shop/deploys"),
                        ("traces", "/projects/shop/traces"),
                        ("trace", f"/projects/shop/traces/{trace_id}"),
                        ("logs", "/projects/shop/logs?range=1h"),
                        ("metrics", "/projects/shop/metrics?range=24h&metric=worker.job.duration"
                                    "&group_by=queue&agg=p95"),
                        ("onboarding", "/projects/new-app/errors"),
                        ("users", "/users")):
                    page.goto(server.base + path)
                    page.wait_for_load_state("networkidle")
                    page.screenshot(path=str(OUT / f"{name}.png"), full_page=True)
                    print(f"docs/screenshots/{name}.png")
                browser.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
