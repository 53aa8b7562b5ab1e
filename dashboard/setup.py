"""A project's setup page: how to send data, and "Create a Sentry DSN".

The POST makes a new Sentry-style key (32 hex characters, storage/keys.py) and
answers with the full DSN in the page itself, once: the key is kept only as its
hash, never in a cookie, a redirect URL or a log line (Tornado's access log has
the path, not the form). Reloading the page does not show it again; another press
makes another key.

Where SDKs reach the collector is `dashboard.public_url` when set; otherwise the
scheme and Host of this request, which are right when the dashboard is served on
the ingest port (the default) and may not be when it has a port of its own (the
page then says so).
"""

from __future__ import annotations

from tornado.web import HTTPError

from dashboard.base import DashboardHandler
from storage import keys

MAX_NAME = 200  # projects.name's column


def project_name_arg(raw: str) -> str:
    """A project name from the form: 1 to MAX_NAME characters, no control character."""
    name = raw.strip()
    if not name or len(name) > MAX_NAME or any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise HTTPError(400, f"the project name must be 1 to {MAX_NAME} characters, with no "
                             "control characters")
    return name


class SetupPage(DashboardHandler):
    """GET /projects/{name}/setup: the form (GET /setup: the same with the project's
    name to fill in, for a database without projects); POST /setup, field `project`
    (which may name a new project): a new key and its DSN, shown once."""

    write_role = "admin"  # it makes ingest keys
    write_scope = "ingest-admin"

    def ingest_address(self) -> tuple[str, bool]:
        """(scheme://host[:port] SDKs send to, whether it is only a guess)."""
        public = self.dash.settings.get("public_url")
        if public:
            return str(public).rstrip("/"), False
        own_port = self.dash.settings.get("port") is not None
        return f"{self.request.protocol}://{self.request.host}", own_port

    async def get(self, project_name: str | None = None) -> None:
        if project_name is None:  # /setup: the first project, named in the form
            await self.list_projects()
        else:
            await self.load_project(project_name)
        address, guessed = self.ingest_address()
        example = keys.dsn("<key>", address, self.project.id) if self.project else \
            keys.dsn("<key>", address, 0).removesuffix("/0") + "/<project id>"
        self.render("setup.html", dsn=None, example_dsn=example, key_id=None,
                    address=address, guessed=guessed, section="setup")

    async def post(self, _project_in_path: str | None = None) -> None:
        name = project_name_arg(self.get_argument("project", ""))
        existing = next((p for p in await self.list_projects() if p.name == name), None)
        if existing is not None:  # its token's reach and the role in it, before the key
            self.enter_project(existing.id)
        else:
            # A new project, or one this login does not reach: beyond any one project,
            # so a token over all projects and the global admin role.
            self.authorize(None)
            self.require_role(self.write_role)
        key, key_id = await self.run(keys.create_key, self.store, name, True, self.actor())
        project = await self.load_project(name)
        address, guessed = self.ingest_address()
        shown = keys.dsn(key, address, project.id)
        self.render("setup.html", dsn=shown, example_dsn=shown, key_id=key_id,
                    address=address, guessed=guessed, section="setup")

