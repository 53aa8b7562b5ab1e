"""Starting a real OpenID provider, tests/js/oidc_provider.mjs (the certified
`oidc-provider` npm package), and steering it through its /_test/ routes."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from tests.support import clients
from tests.support.server import Server

JS_DIR = clients.js_dir()
LISTENING = re.compile(r"OIDC provider listening on (http://\S+)")
CLIENT_ID = "sounding"
CLIENT_SECRET = "a client secret of the test provider"  # as the script registers it
# Two providers of Sounding's configuration on the one provider process: two buttons,
# each with its own identities and key cache.
PROVIDERS = ("corp", "corp-b")


@dataclass
class IdP:
    url: str
    proc: subprocess.Popen[str]

    def control(self, what: str, **body: Any) -> None:
        answer = requests.post(f"{self.url}/_test/{what}", json=body, timeout=10)
        assert answer.status_code == 200, answer.text

    def jwks_fetches(self) -> int:
        return int(requests.get(f"{self.url}/_test/stats", timeout=10).json()["jwks"])

    def register(self, *servers: Server) -> None:
        """Register the collectors' redirect URIs (known once they listen)."""
        self.control("setup", redirect_uris=[
            f"{s.base}/login/oidc/{name}/callback" for s in servers for name in PROVIDERS],
            post_logout_redirect_uris=[f"{s.base}/login" for s in servers])

    def sounding_config(self) -> str:
        """Sounding's YAML for PROVIDERS, roles from the `groups` claim: across all
        projects, in one (acme-devs) or in several (beta-leads)."""
        entries = "".join(f"""
      - name: {name}
        label: Sign in with {name}
        issuer: {self.url}
        client_id: {CLIENT_ID}
        client_secret: {CLIENT_SECRET}
        scopes: [openid, email, groups]
        role_map:
          sounding-admins: admin
          staff: member
          sounding-viewers: viewer
          acme-devs: {{project: acme, role: member}}
          beta-leads: [{{project: beta, role: admin}}, {{project: acme, role: viewer}}]
""" for name in PROVIDERS)
        return f"dashboard:\n  oidc:\n    providers:{entries}"


@contextmanager
def identity_provider() -> Iterator[IdP]:
    """The provider on a free port of 127.0.0.1, stopped (its standard input closed)
    at the end, where it must exit 0."""
    if shutil.which("node") is None or not (JS_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.fail("tests/js is not installed: run `make test-deps` (npm ci in tests/js)")
    proc = subprocess.Popen(["node", str(JS_DIR / "oidc_provider.mjs")], cwd=JS_DIR,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        found = LISTENING.search(proc.stdout.readline())
        assert found, "the OpenID provider did not start"
        yield IdP(found.group(1), proc)
    finally:
        proc.stdin.close()
        try:
            code = proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    assert code == 0, f"the OpenID provider exited with {code}"
