"""The manual cannot drift from the code: every configuration key (with its default) and
every environment alias is in docs/configuration.md's reference tables, every HTTP route
(with its methods) in docs/routes.md, nothing is documented there that the code does not
have, and every relative link of README.md and docs/*.md leads to a file and a heading
that exist.

The lists come from the code, not from a hand-kept copy: the keys from sounding/config.py's
service-level defaults and from the factory of every component Sounding registers under an
entry point (receivers, processors, exporters, extensions), plus the keys of the alerts'
destination and rule items, which their validation owns; the routes from the Tornado route
tables of the ingest port (the signals, the Sentry door, /health, /metrics), the OTLP/HTTP
port and the dashboard, read without starting a server, and the gRPC methods from the
signal table that the gRPC receiver serves."""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import yaml
from tornado.web import RequestHandler

from dashboard import oidc_settings
from dashboard.app import Dashboard
from extensions.alerts import destinations, rules
from receiver.http.door import otlp_routes
from receiver.http.server import ingest_routes
from receiver.signals.table import SIGNALS
from runtime.factory import GROUPS, SECTIONS, factory_for
from sounding import config as config_mod

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
NO_DEFAULT = object()  # a key of a list item (an alert destination or rule): none to compare
# A table row whose first cell is one code span: `receivers.http.port` or `SOUNDING_HTTP_PORT`.
ROW = re.compile(r"^\| `([^`]+)` \|(.*)$")
METHODS = ("get", "head", "post", "put", "patch", "delete", "options")


# --- configuration keys -------------------------------------------------------------

def _leaves(path: str, value: Any) -> Iterator[tuple[str, Any]]:
    """A setting per leaf; a mapping that is empty by default (a processor's section,
    forward's headers, retention's projects) is one setting."""
    if isinstance(value, dict) and value:
        for key, child in value.items():
            yield from _leaves(f"{path}.{key}", child)
    else:
        yield path, value


def configuration_keys() -> dict[str, Any]:
    """Every setting Sounding itself defines, by dotted path, with its default."""
    keys = dict(item for section, value in config_mod.DEFAULTS.items()
                for item in _leaves(section, value))
    for kind, group in GROUPS.items():
        for entry in entry_points(group=group):
            if entry.dist is None or entry.dist.name != "sounding":
                continue  # a plugin documents its own keys
            if kind != "extension":
                path = f"{SECTIONS[kind]}.{entry.name}"
            elif entry.name in config_mod.BUILTIN_EXTENSIONS:
                path = entry.name
            else:
                path = f"extensions.{entry.name}"
            keys.update(_leaves(path, factory_for(kind, entry.name).defaults()))
    keys["extensions"] = {}
    for key in sorted(set().union(*destinations.KEYS.values())):
        keys[f"alerts.destinations[].{key}"] = NO_DEFAULT
    conditions = {key for keys_ in rules.CONDITIONS.values() for key in keys_}
    for key in ("on", "destinations", *rules.FILTERS, *sorted(conditions)):
        keys[f"alerts.rules[].{key}"] = NO_DEFAULT
    for key, default in oidc_settings.PROVIDER_DEFAULTS.items():
        keys[f"dashboard.oidc.providers[].{key}"] = \
            NO_DEFAULT if key in oidc_settings.REQUIRED else default
    return keys


def _rows(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(first cell's code, the other cells) of every table row opening with a code span."""
    for line in path.read_text().splitlines():
        match = ROW.match(line)
        if match:
            rest = match.group(2).strip().removesuffix("|")
            yield match.group(1), [cell.strip() for cell in rest.split(" | ")]


def _code(cell: str) -> str | None:
    """A cell's first code span: the value it documents, before any comment."""
    found = re.match(r"`([^`]*)`", cell)
    return found.group(1) if found else None


def documented_keys() -> dict[str, str]:
    """Each key of docs/configuration.md's reference tables and its default cell."""
    return {first: cells[0] for first, cells in _rows(DOCS / "configuration.md")
            if not first.startswith("SOUNDING")}


def key_problems(code: dict[str, Any], documented: dict[str, str]) -> list[str]:
    problems = [f"{key}: not in docs/configuration.md" for key in code if key not in documented]
    problems += [f"{key}: documented, but no such setting" for key in documented
                 if key not in code]
    for key, default in code.items():
        cell = documented.get(key)
        if cell is None or default is NO_DEFAULT:
            continue
        written = _code(cell)
        if written is None or yaml.safe_load(written) != default:
            problems.append(f"{key}: the default is {default!r}, documented as {cell!r}")
    return problems


def test_every_configuration_key_is_documented_with_its_default() -> None:
    assert key_problems(configuration_keys(), documented_keys()) == []


def test_every_environment_alias_is_documented() -> None:
    documented = {first: _code(cells[0]) for first, cells in _rows(DOCS / "configuration.md")
                  if first.startswith("SOUNDING_")}
    code = {name: ".".join(path) for name, path in config_mod.ENV_ALIASES.items()}
    documented.pop("SOUNDING_CONFIG", None)  # the file's path, read before any setting
    assert documented == code


def test_a_new_or_stale_key_fails() -> None:
    """What the tests above catch: a key added to a factory's defaults without docs, a
    default changed without docs, and a key the docs keep after the code dropped it."""
    code, documented = configuration_keys(), documented_keys()
    code["receivers.http.brand_new"] = 1
    code["storage.url"] = "sqlite:///elsewhere.db"
    documented["receivers.http.gone"] = "`1`"
    problems = key_problems(code, documented)
    assert "receivers.http.brand_new: not in docs/configuration.md" in problems
    assert "receivers.http.gone: documented, but no such setting" in problems
    assert ("storage.url: the default is 'sqlite:///elsewhere.db', documented as "
            "'`sqlite:///sounding.db`'") in problems


# --- HTTP routes ---------------------------------------------------------------------

def _shape(path: str) -> str:
    """A path with each variable part as {}: a route's regex groups, a doc's {name}."""
    path = re.sub(r"\([^()]*\)", "{}", path)
    path = re.sub(r"\{[^{}]*\}", "{}", path)
    return path.removesuffix("?")  # the Sentry door's optional final slash


def _methods(handler: type[RequestHandler]) -> str:
    """The methods a handler answers: those its classes define above Tornado's base,
    whose own methods all answer 405."""
    own = [cls for cls in handler.__mro__ if cls not in (RequestHandler, object)]
    return ", ".join(m.upper() for m in METHODS if any(m in vars(cls) for cls in own))


def routes() -> set[tuple[str, str]]:
    """(methods, path shape) of every route the ingest port, the OTLP/HTTP port and the
    dashboard serve, and (gRPC, /service/method) of every gRPC method. The tables only
    keep their arguments; nothing here is served."""
    tables = [ingest_routes(None), otlp_routes(None),  # type: ignore[arg-type]
              Dashboard(None, {}).routes()]  # type: ignore[arg-type]
    return ({(_methods(handler), _shape(pattern))
             for table in tables for pattern, handler, *_ in table}
            | {("gRPC", f"/{signal.grpc.service}/{signal.grpc.method}") for signal in SIGNALS})


def documented_routes() -> set[tuple[str, str]]:
    """(methods, path shape) of docs/routes.md's rows: | `path` | METHODS | where |."""
    return {(cells[0], _shape(first)) for first, cells in _rows(DOCS / "routes.md")
            if first.startswith("/")}


def route_problems(code: set[tuple[str, str]], documented: set[tuple[str, str]]
                   ) -> list[str]:
    return ([f"{m} {p}: not in docs/routes.md" for m, p in sorted(code - documented)]
            + [f"{m} {p}: in docs/routes.md, not served" for m, p in sorted(documented - code)])


def test_every_route_is_documented_with_its_methods() -> None:
    assert route_problems(routes(), documented_routes()) == []


def test_a_new_or_stale_route_fails() -> None:
    code = routes() | {("GET", "/api/v1/projects/{}/brand-new")}
    documented = documented_routes() | {("POST", "/gone")}
    problems = route_problems(code, documented)
    assert "GET /api/v1/projects/{}/brand-new: not in docs/routes.md" in problems
    assert "POST /gone: in docs/routes.md, not served" in problems


# --- links ---------------------------------------------------------------------------

def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _prose(path: Path) -> str:
    """The file without its fenced code blocks, where a (…) is code, not a link."""
    return re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for line in _prose(path).splitlines():
        if line.startswith("#"):
            slug = _slug(line.lstrip("#"))
            base, n = slug, 0
            while slug in found:
                n += 1
                slug = f"{base}-{n}"
            found.add(slug)
    return found


def link_problems(path: Path) -> list[str]:
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", _prose(path)):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        file_part, _, fragment = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            problems.append(f"{path.name}: {target}: no such file")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            problems.append(f"{path.name}: {target}: no such heading")
    return problems


def test_every_relative_link_resolves() -> None:
    pages = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
    assert [problem for page in pages for problem in link_problems(page)] == []


def test_a_broken_link_fails(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Top\n\n## Sidecar → gateway\n")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#sidecar--gateway) [no](a.md#nowhere) [gone](c.md)\n"
                    "```\n[code](not-a-link.md)\n```\n")
    assert link_problems(page) == ["b.md: a.md#nowhere: no such heading",
                                   "b.md: c.md: no such file"]


def test_the_readme_stays_a_front_door() -> None:
    assert len((REPO / "README.md").read_text().splitlines()) <= 300


def test_the_single_sign_on_examples_pass_the_checks(tmp_path: Path) -> None:
    """dashboard.md's Keycloak, Entra ID, Google and Dex examples are a configuration
    Sounding accepts, as written."""
    text = (DOCS / "dashboard.md").read_text()
    start = text.index("```yaml\ndashboard:\n  oidc:")
    example = text[start + len("```yaml\n"):text.index("```", start + 7)]
    path = tmp_path / "sounding.yaml"
    path.write_text(example)
    loaded = config_mod.load(path, environ={"SOUNDING_DATABASE_URL": "sqlite:///x.db"})
    names = [p["name"] for p in loaded["dashboard"]["oidc"]["providers"]]
    assert names == ["keycloak", "entra", "google", "dex"]
    assert loaded["dashboard"]["sso_only"] is True
