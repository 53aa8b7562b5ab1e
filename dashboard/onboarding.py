"""What a project with no data shows: how to send it (OTLP environment variables, a
Sentry DSN, a curl for /ingest/errors), with the project's endpoint filled in and the
id of one of its keys. Never a key: keys are kept only as hashes (storage/keys.py),
so the snippets carry a placeholder naming the key's id, and the setup page makes
new ones."""

from __future__ import annotations

from dataclasses import dataclass

from dashboard.base import DashboardHandler
from storage import keys
from storage.queries import projects as pq
from storage.store import Store


@dataclass(frozen=True)
class Onboarding:
    address: str  # scheme://host[:port] that SDKs send to
    guessed: bool  # the request's host, on a dashboard with a port of its own
    key_id: str | None  # one active key of the project, None when it has none
    placeholder: str  # what stands for the key in the snippets
    dsn: str  # the Sentry DSN form, with the placeholder for the key


def ingest_address(handler: DashboardHandler) -> tuple[str, bool]:
    """(scheme://host[:port] SDKs send to, whether it is only a guess): as the setup
    page says it (dashboard/setup.py)."""
    public = handler.dash.settings.get("public_url")
    if public:
        return str(public).rstrip("/"), False
    own_port = handler.dash.settings.get("port") is not None
    return f"{handler.request.protocol}://{handler.request.host}", own_port


def project_key_id(store: Store, project_name: str) -> str | None:
    """The newest unrevoked key's id of the project."""
    ids = [k.key_id for k in keys.list_keys(store)
           if k.project == project_name and k.revoked_us is None]
    return ids[-1] if ids else None


def onboarding(handler: DashboardHandler, project: pq.Project, key_id: str | None) -> Onboarding:
    address, guessed = ingest_address(handler)
    placeholder = f"<your key, id {key_id}…>" if key_id else "<your key>"
    return Onboarding(address, guessed, key_id, placeholder,
                      keys.dsn(placeholder, address, project.id))
