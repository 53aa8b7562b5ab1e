"""The base of every dashboard and read-API handler: security headers, errors, JSON
and the templates' namespace. What it builds on, one concept a module:

- dashboard/access.py: login, roles (checked server-side before any handler runs),
  private cookies and the cross-site request forgery check;
- dashboard/queryargs.py: query arguments read and checked, links that change some;
- dashboard/scope.py: the project and time range of the URL, and blocking queries
  run off the event loop;
- dashboard/context.py: what the route table gives every handler.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from tornado.web import HTTPError

from dashboard import format as fmt
from dashboard import timerange
from dashboard.context import DashboardContext
from dashboard.scope import ScopeHandler
from storage.queries.values import finite

__all__ = ["DashboardContext", "DashboardHandler", "json_text"]

TEMPLATES = Path(__file__).parent / "templates"
# Scripts and styles come only from our own static files; nothing inline runs, so
# even a missed escape could not execute.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")

log = logging.getLogger(__name__)


def json_text(document: Any) -> str:
    """Strictly valid JSON: no NaN or Infinity tokens, which JSON.parse and most
    clients refuse. A non-finite number (from a stored value or computed from stored
    numbers) is written as the string "NaN", "Infinity" or "-Infinity". "</" is
    escaped, so the text is safe even if sniffed as HTML or put in an attribute."""
    try:
        text = json.dumps(document, allow_nan=False)
    except ValueError:
        text = json.dumps(finite(document), allow_nan=False)
    return text.replace("</", "<\\/")


class DashboardHandler(ScopeHandler):
    def get_template_path(self) -> str:
        return str(TEMPLATES)

    def set_default_headers(self) -> None:
        self.set_header("Server", "sounding")
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("Referrer-Policy", "same-origin")
        self.set_header("Cache-Control", "no-store")

    # Errors.

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        message = self._reason or "error"
        if isinstance(exc, HTTPError) and exc.log_message and status_code < 500:
            message = exc.log_message % exc.args if exc.args else exc.log_message
        if status_code == 401:
            self.set_header("WWW-Authenticate", 'Bearer realm="sounding"')
        if self.api:
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps({self.error_key: message}))
            return
        self.render("error.html", status=status_code, message=message)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, HTTPError) and value.status_code < 500:
            return
        super().log_exception(typ, value, tb)

    # What handlers share.

    def json_body(self, example: str) -> Any:
        """The request's JSON body; a 400 showing `example` when it is not JSON."""
        try:
            return json.loads(self.request.body or b"null")
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
            raise HTTPError(400, f"the body must be JSON: {example}") from exc

    def write_json(self, document: Any) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json_text(document))

    def get_template_namespace(self) -> dict[str, Any]:
        namespace = super().get_template_namespace()
        namespace.update(fmt=fmt, json_encode=json_text, now_us=self.now_us, project=self.project,
                         projects=self.projects, purl=self.project_url, q=quote,
                         section="errors", here=self.here, kept_args=self.kept_args,
                         range_params=self.range_params(),
                         range_url=(self.here(dict(self.chosen_range.params()))
                                    if self.chosen_range else None),
                         range_labels=timerange.LABELS, logged_in=self.logged_in,
                         login=self.login, can=self.can,
                         log_url=self.log_url)
        return namespace

    def log_url(self, trace_id: str | None, service: str | None, time_ns: int) -> str:
        """The Logs page at one record, found by its time (and trace, or else service):
        a minute either side, the record at `time_ns` opened and pointed at."""
        return self.project_url("logs", trace_id=trace_id or None,
                                service=None if trace_id else service, at=time_ns,
                                **fmt.range_around_ns(time_ns))

    def project_url(self, section: str, project: str | None = None, **params: Any) -> str:
        """A dashboard URL in a project; None and missing parameters are left out."""
        name = project if project is not None else (self.project.name if self.project else "")
        query = urlencode({k: v for k, v in params.items() if v is not None})
        path = f"/projects/{quote(name, safe='')}/{section}"
        return path + ("?" + query if query else "")
