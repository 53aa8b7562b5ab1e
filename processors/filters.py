"""Inbound filters: the errors a project does not want, refused before anything else
looks at them, and counted (Batch.filtered, counted by runtime/drops.count_filtered
as `filtered`).

For the errors of the Sentry doors and the custom error doors (/ingest/errors, its
batch and gRPC form): this stage runs first in the pipeline, before the stages that
make errors out of OpenTelemetry spans and log records, which it leaves alone. Each
filter is off unless the project's policy (model/policy.py) turns it on:

- `localhost`: the user's address (`user.ip_address`; the client's when it is
  Sentry's `{{auto}}`) is a loopback one, or the request's URL is on localhost,
  127.0.0.1 or [::1];
- `browser_extensions`: errors that browser extensions and injected scripts raise
  (a frame in a chrome-extension:// or moz-extension:// script, or one of the
  messages they are known by, after Sentry's list);
- `legacy_browsers`: a request's User-Agent from Internet Explorer, Safari before
  12, Chrome before 70, Firefox before 68, Opera on Presto or the Android browser
  before 4.4;
- `web_crawlers`: a User-Agent of a crawler, a monitor or a headless browser;
- `error_messages`: globs (`*`, `?`, case-insensitive) over the error's class, its
  message and `Class: message`;
- `releases`: globs over the release;
- `ip_ranges`: CIDR blocks over the user's address, else the client's (the
  connection's, or what a trusted proxy forwarded with `xheaders`).

The User-Agent and URL are the ones the event's request tells (`request.headers`,
`request.url`), as a browser SDK sends them; the custom door has them in its
`context.request` (docs/sending-data.md).
"""

from __future__ import annotations

import fnmatch
import functools
import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit

from model.component import Processor
from model.policy import DEFAULT, FilterSettings
from model.records import Batch, ErrorEvent

AUTO = "{{auto}}"
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
EXTENSION_SCRIPTS = re.compile(
    r"^(?:chrome|moz|safari|safari-web|ms-browser)-extension://|^chrome://|^resource://"
    r"|^webkit-masked-url://|^extensions/|^/?lib/extensions/", re.IGNORECASE)
# Messages of errors that browser extensions and injected scripts raise (Sentry's list),
# looked for as substrings (a few `in` tests cost less than one search of an
# alternation, which Python's `re` tries at every character).
EXTENSION_MESSAGES = (
    "top.GLOBALS", "originalCreateNotification", "canvas.contentDocument",
    "MyApp_RemoveAllHighlights", "http://tt.epicplay.com", "Can't find variable: ZiteReader",
    "jigsaw is not defined", "ComboSearch is not defined", "http://loading.retry.widdit.com/",
    "atomicFindClose", "fb_xd_fragment", "bmi_SafeAddOnload", "EBCallBackMessageReceived",
    "conduitPage", "null is not an object (evaluating 'elt.parentNode')",
    "Can't find variable: gmo", "plugin.setSuspendState is not a function",
    "window._sharedData.entry_data", "Extension context invalidated",
    "ResizeObserver loop limit exceeded", "__gCrWeb", "instantSearchSDKJSBridgeClearHighlight",
    "vid_mate_check is not defined",
    "Non-Error promise rejection captured with value: Object Not Found Matching Id")
# User-Agents of crawlers, monitors and headless browsers, lowercased substrings.
CRAWLERS = (
    "bot/", "bot;", "bot)", "bot ", "bot.htm", "crawler", "spider", "slurp", "pingdom",
    "mediapartners", "adsbot", "bingpreview", "facebookexternalhit", "ia_archiver",
    "lighthouse", "headlesschrome", "phantomjs", "uptimerobot", "statuscake", "site24x7",
    "newrelicpinger", "datadogsynthetics", "curl/", "wget/", "python-requests")
_IE = re.compile(r"MSIE \d|Trident/\d")
_PRESTO = re.compile(r"Presto/|Opera/9")
_OLD_ANDROID = re.compile(r"Android (?:[0-3]\.|4\.[0-3]\b)(?!.*Chrome/)")
_CHROME = re.compile(r"(?:Chrome|CriOS)/(\d+)")
_FIREFOX = re.compile(r"(?:Firefox|FxiOS)/(\d+)")
_SAFARI = re.compile(r"Version/(\d+)[.\d]* (?:Mobile/\S+ )?Safari/")
LEGACY_BELOW = {"chrome": 70, "firefox": 68, "safari": 12}


def crawler(user_agent: str) -> bool:
    agent = user_agent.lower()
    return any(known in agent for known in CRAWLERS) or agent.endswith("bot")


def legacy_browser(user_agent: str) -> bool:
    if _IE.search(user_agent) or _PRESTO.search(user_agent) \
            or _OLD_ANDROID.search(user_agent):
        return True
    for name, pattern in (("chrome", _CHROME), ("firefox", _FIREFOX), ("safari", _SAFARI)):
        found = pattern.search(user_agent)
        if found is not None:
            return int(found.group(1)) < LEGACY_BELOW[name]
    return False


def _section(error: ErrorEvent, name: str) -> dict[str, Any]:
    value = (error.context or {}).get(name)
    return value if isinstance(value, dict) else {}


def user_agent_of(error: ErrorEvent) -> str:
    headers = _section(error, "request").get("headers")
    pairs = headers.items() if isinstance(headers, dict) else \
        (tuple(p) for p in headers if isinstance(p, list | tuple) and len(p) == 2) \
        if isinstance(headers, list) else ()
    for name, value in pairs:
        if isinstance(name, str) and name.lower() == "user-agent" and isinstance(value, str):
            return value
    return ""


def _address(text: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    return _parsed(text) if isinstance(text, str) else None


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Cached: the errors of one request come from one client, often one user."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _frames(error: ErrorEvent) -> list[str]:
    return [str(frame.get("abs_path") or frame.get("filename") or "")
            for exception in error.exceptions or () for frame in exception.get("frames") or ()
            if isinstance(frame, dict)]


@functools.lru_cache(maxsize=256)
def _globs(globs: tuple[str, ...]) -> re.Pattern[str] | None:
    if not globs:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs),
                      re.IGNORECASE | re.DOTALL)


@functools.lru_cache(maxsize=256)
def _networks(blocks: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(ipaddress.ip_network(block, strict=False) for block in blocks)


def refused_by(settings: FilterSettings, error: ErrorEvent, client_ip: str | None
               ) -> str | None:
    """The name of the first filter that refuses `error`, or None."""
    given = _section(error, "user").get("ip_address")
    # Sentry's `{{auto}}`: the SDK asks for the address it was sent from.
    user_ip = _address(client_ip if given == AUTO else given)
    if settings.localhost:
        host = urlsplit(str(_section(error, "request").get("url") or "")).hostname or ""
        if (user_ip is not None and user_ip.is_loopback) or host.lower() in LOCAL_HOSTS:
            return "localhost"
    if settings.browser_extensions and (
            any(known in error.message for known in EXTENSION_MESSAGES)
            or any(EXTENSION_SCRIPTS.search(path) for path in _frames(error))):
        return "browser_extensions"
    if settings.legacy_browsers or settings.web_crawlers:
        agent = user_agent_of(error)
        if agent and settings.web_crawlers and crawler(agent):
            return "web_crawlers"
        if agent and settings.legacy_browsers and legacy_browser(agent):
            return "legacy_browsers"
    messages = _globs(settings.error_messages)
    if messages is not None and any(
            messages.fullmatch(text) for text in (
                error.exception_class, error.message,
                f"{error.exception_class}: {error.message}")):
        return "error_messages"
    releases = _globs(settings.releases)
    if releases is not None and error.release and releases.fullmatch(error.release):
        return "releases"
    if settings.ip_ranges:
        address = user_ip or _address(client_ip)
        if address is not None and any(address.version == net.version and address in net
                                       for net in _networks(settings.ip_ranges)):
            return "ip_ranges"
    return None


class FiltersProcessor(Processor):
    """The stage (see the module). Must run before `exceptions` and `logexceptions`."""

    default_config: dict[str, object] = {}  # the policy: section configures the filters

    def process(self, batch: Batch) -> Batch:
        settings = (batch.policy or DEFAULT).filters
        if not batch.errors or not settings.any:
            return batch
        kept = [error for error in batch.errors
                if refused_by(settings, error, batch.client_ip) is None]
        if len(kept) != len(batch.errors):
            batch.filtered["errors"] = batch.filtered.get("errors", 0) + \
                len(batch.errors) - len(kept)
            batch.errors = kept
        return batch
