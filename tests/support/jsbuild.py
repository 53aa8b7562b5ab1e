"""The real JavaScript tools of tests/js: esbuild bundles the TypeScript fixture in
tests/js/sourcemap_app with source maps, and `sentry-cli` injects debug ids and
uploads them, pointed at a running Sounding by SENTRY_URL, as a team's CI does."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import clients

JS_DIR = clients.js_dir()
BIN = JS_DIR / "node_modules" / ".bin"
APP = JS_DIR / "sourcemap_app"


def require_tools() -> None:
    if shutil.which("node") is None or not (BIN / "sentry-cli").exists():
        pytest.fail("tests/js is not installed: run `make test-deps` (npm ci in tests/js)")


def esbuild(out: Path, *, entry: str = "src/main.ts", platform: str = "browser",
            extra: tuple[str, ...] = ()) -> Path:
    """Bundle and minify the app into `out` with linked source maps; the bundle's path."""
    require_tools()
    out.mkdir(parents=True, exist_ok=True)
    bundle = out / "app.js"
    subprocess.run([str(BIN / "esbuild"), entry, "--bundle", "--minify", "--sourcemap",
                    f"--platform={platform}", f"--outfile={bundle}", *extra],
                   cwd=APP, check=True, capture_output=True, timeout=60)
    return bundle


def vite_build(out: Path, *, url: str, token: str, project: str = "acme") -> Path:
    """`vite build` of the app's index.html into `out`, @sentry/vite-plugin uploading
    the source maps to `url` as it builds (tests/js/sourcemap_app/vite.config.mjs)."""
    require_tools()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SENTRY")}
    env.update({"SENTRY_URL": url, "SENTRY_ORG": "sounding", "SENTRY_PROJECT": project,
                "SENTRY_AUTH_TOKEN": token, "OUT_DIR": str(out),
                # The plugins' CLI caches organization regions in its config directory:
                # a fresh one per build, so no earlier collector's port is remembered.
                "XDG_CONFIG_HOME": str(out.parent / f"{out.name}-config")})
    done = subprocess.run([str(BIN / "vite"), "build"], cwd=APP, env=env,
                          capture_output=True, text=True, timeout=180)
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "Error" not in output, output
    return out


def sentry_cli(*args: str, url: str, token: str | None, project: str = "acme",
               cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SENTRY")}
    env.update({"SENTRY_URL": url, "SENTRY_ORG": "sounding", "SENTRY_PROJECT": project,
                "SENTRY_LOAD_DOTENV": "0", "SENTRYCLI_SKIP_DOWNLOAD": "1",
                "SENTRY_DISABLE_UPDATE_CHECK": "true"})
    if token is not None:
        env["SENTRY_AUTH_TOKEN"] = token
    done = subprocess.run([str(BIN / "sentry-cli"), *args], cwd=cwd or APP, env=env,
                          capture_output=True, text=True, timeout=120)
    if check:
        assert done.returncode == 0, f"sentry-cli {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done
