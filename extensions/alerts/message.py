"""What an alert says: the message built from a stored fact, and its three renderings
(webhook JSON, Slack blocks, email). Pure and deterministic: the same fact renders the
same bytes on every retry and every collector (only the webhook's signature header,
which carries the send time, differs).

The webhook payload, schema version 1 (keys are stable: always present, null when
unknown; new keys may be added, none removed or renamed within a version):

    {
      "schema": 1,
      "type": "alert",
      "id": "<32 hex>",             same for every retry and collector: deduplicate on it
      "kind": "new_group" | "regression" | "deploy_worse" | "frequency"
              | "error_rate" | "latency" | "crash_free_sessions" | "crash_free_users"
              | "test" | "cron_missed" | "cron_failed" | "cron_recovered",
      "project": {"id": 1, "name": "shop"},
      "title": "New error: KeyError: 'sku'",
      "summary": "First seen in production on checkout, release 1.4.2.",
      "subject": "<the fingerprint, the deploy id or the service>",
      "group": {"fingerprint": "...", "id": 12 | null, "exception_class": "KeyError",
                "message": "'sku'"} | null,        for new_group, regression, frequency
      "deploy": {"id": "...", "git_sha": "...", "version": "...", "environment": "...",
                 "reasons": ["error rate 1.0% -> 9.0%"]} | null,   for deploy_worse
      "monitor": {"slug": "nightly-report", "id": 3, "incident_id": 7,
                  "reason": "missed" | "error" | "timeout" | null,
                  "schedule": "every 1 minute"} | null,   for the cron_* kinds
      "state": "firing" | "recovered" | null,      for error_rate, latency, crash_free_* and cron_*
      "counts": {"count": 57, "threshold": 50, "minutes": 5, ...},  numbers only
      "first_seen": "2026-01-02T03:04:05.000006Z" | null,
      "last_seen": "2026-01-02T03:04:05.000006Z" | null,
      "environment": "production" | null,
      "release": "1.4.2" | null,
      "service": "checkout" | null,
      "link": "https://sounding.example.com/projects/shop/errors/12" | null,
      "details": {...}              the fact's details as stored; kind-specific, not stable
    }

A digest (alerts beyond a destination's rate, folded into one message):

    {"schema": 1, "type": "digest", "id": "<32 hex>", "count": <alerts listed + more>,
     "more": <alerts folded but not listed>, "alerts": [<alert objects as above>]}

The fact's details are read by these keys (the evaluators and the writer write them):
group_id, exception_class, message, environment (or env), release, service, count,
threshold (or p95_ms), value, minutes, state, reopen_count, git_sha, version, reasons,
first_seen_us, last_seen_us.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import quote, urlencode

SCHEMA = 1
GROUP_KINDS = frozenset({"new_group", "regression", "frequency"})
# Release health rules (evaluate.py): the subject is the release.
CRASH_FREE = ("crash_free_sessions", "crash_free_users")
CRON_KINDS = frozenset({"cron_missed", "cron_failed", "cron_recovered"})
_CRON_REASONS = {"missed": "missed its check-in", "error": "failed",
                 "timeout": "ran past its max runtime"}
COUNT_KEYS = ("count", "threshold", "value", "minutes", "p95_ms", "reopen_count",
              "times_seen")
TITLE_LIMIT = 200
SUMMARY_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class Alert:
    id: str
    kind: str
    project: str
    project_id: int
    subject: str
    title: str
    summary: str
    counts: dict[str, int | float] = field(default_factory=dict)
    first_seen_us: int | None = None
    last_seen_us: int | None = None
    environment: str | None = None
    release: str | None = None
    service: str | None = None
    link: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Digest:
    alerts: list[Alert]
    more: int = 0  # folded into this digest but not listed in it

    @property
    def id(self) -> str:
        """Stable for the same alerts: a receiver can deduplicate digests too."""
        return hashlib.sha256(",".join(a.id for a in self.alerts).encode()).hexdigest()[:32]

    @property
    def count(self) -> int:
        return len(self.alerts) + self.more


Message = Alert | Digest


class FactLike(Protocol):
    """What `alert_from` reads of a stored fact (storage.alerts.outbox.Fact)."""

    @property
    def project_id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def subject(self) -> str: ...
    @property
    def dedupe_key(self) -> str: ...
    @property
    def at_us(self) -> int: ...
    @property
    def details(self) -> Mapping[str, Any] | None: ...


def alert_id(project_id: int, dedupe_key: str) -> str:
    return hashlib.sha256(f"{project_id}:{dedupe_key}".encode()).hexdigest()[:32]


def alert_from(fact: FactLike, project: str, public_url: str | None) -> Alert:
    """The message for a fact of project `project` (its name)."""
    details = dict(fact.details or {})
    counts = {k: details[k] for k in COUNT_KEYS
              if isinstance(details.get(k), int | float) and not isinstance(details[k], bool)}
    return Alert(
        id=alert_id(fact.project_id, fact.dedupe_key), kind=fact.kind, project=project,
        project_id=fact.project_id, subject=fact.subject,
        title=clip(_title(fact.kind, fact.subject, details), TITLE_LIMIT),
        summary=clip(_summary(fact.kind, details), SUMMARY_LIMIT), counts=counts,
        first_seen_us=_int(details.get("first_seen_us")) or fact.at_us,
        last_seen_us=_int(details.get("last_seen_us")) or fact.at_us,
        environment=_str(details.get("environment") or details.get("env")),
        release=_str(details.get("release") or details.get("version")),
        service=_str(details.get("service")),
        link=_link(public_url, project, fact.kind, fact.subject, details), details=details)


# Words.

def clip(text: str, limit: int) -> str:
    """One line, at most `limit` characters: client text must not shape the message."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _str(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _num(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _pct(value: Any) -> str:
    return f"{value:.1%}" if isinstance(value, int | float) else "?"


def _error(subject: str, details: Mapping[str, Any]) -> str:
    cls, message = _str(details.get("exception_class")), _str(details.get("message"))
    if cls and message:
        return f"{cls}: {message}"
    return cls or message or f"group {subject[:12]}"


def _where(details: Mapping[str, Any]) -> str:
    parts = []
    if env := _str(details.get("environment") or details.get("env")):
        parts.append(f"in {env}")
    if service := _str(details.get("service")):
        parts.append(f"on {service}")
    if release := _str(details.get("release")):
        parts.append(f"release {release}")
    return (" " + ", ".join(parts)) if parts else ""


def _title(kind: str, subject: str, d: Mapping[str, Any]) -> str:
    service = _str(d.get("service")) or subject
    threshold = d.get("threshold", d.get("p95_ms"))
    recovered = d.get("state") == "recovered"
    if kind == "new_group":
        what = "performance issue" if d.get("issue_type") == "performance" else "error"
        return f"New {what}: {_error(subject, d)}"
    if kind == "regression":
        return f"Regression: {_error(subject, d)}"
    if kind == "frequency":
        return f"{_num(d.get('count', '?'))} events in {_num(d.get('minutes', '?'))} min: " \
               f"{_error(subject, d)}"
    if kind == "deploy_worse":
        name = _str(d.get("version")) or (_str(d.get("git_sha")) or "")[:12] or subject
        env = _str(d.get("environment") or d.get("env"))
        deployed = _str(d.get("service"))
        of = f" of {deployed}" if deployed else ""
        return f"Deploy {name}{of} made things worse" + (f" in {env}" if env else "")
    if kind == "error_rate":
        if recovered:
            return f"Error rate of {service} recovered: {_pct(d.get('value'))}"
        return f"Error rate of {service} above {_pct(threshold)}: {_pct(d.get('value'))}"
    if kind == "latency":
        if recovered:
            return f"p95 latency of {service} recovered: {_num(d.get('value', '?'))} ms"
        return f"p95 latency of {service} above {_num(threshold)} ms: " \
               f"{_num(d.get('value', '?'))} ms"
    if kind in CRASH_FREE:
        what = "sessions" if kind == "crash_free_sessions" else "users"
        env = _str(d.get("environment"))
        of = f"{subject}" + (f" in {env}" if env else "")
        if recovered:
            return f"Crash-free {what} of {of} recovered: {_pct(d.get('value'))}"
        return f"Crash-free {what} of {of} below {_pct(threshold)}: {_pct(d.get('value'))}"
    if kind == "test":
        return "Test alert from Sounding"
    if kind in CRON_KINDS:
        if kind == "cron_recovered":
            return f"Cron monitor {subject} recovered"
        return f"Cron monitor {subject} " \
               f"{_CRON_REASONS.get(str(d.get('reason')), 'failed')}"
    if kind == "spike_protection":
        if d.get("state") == "stopped":
            return f"Spike protection stopped for {subject}"
        return f"Spike protection started for {subject}: capped at {_num(d.get('cap', '?'))}/s"
    return f"{kind}: {subject}"


def _summary(kind: str, d: Mapping[str, Any]) -> str:
    minutes = _num(d.get("minutes", "?"))
    if kind == "new_group":
        return f"First seen{_where(d)}."
    if kind == "regression":
        return f"A resolved error occurred again{_where(d)}."
    if kind == "frequency":
        return f"More than {_num(d.get('threshold', '?'))} events in {minutes} " \
               f"minutes{_where(d)}."
    if kind == "deploy_worse":
        reasons = d.get("reasons")
        if isinstance(reasons, list) and reasons:
            return "; ".join(str(r) for r in reasons) + "."
        return "Flagged worse by the before/after comparison."
    if kind in ("error_rate", "latency"):
        if d.get("state") == "recovered":
            return f"Back under the threshold over the last {minutes} minutes."
        return f"Over the threshold for the last {minutes} minutes."
    if kind in CRASH_FREE:
        sessions = f"{_num(d.get('count', '?'))} sessions, {_num(d.get('crashed', '?'))} crashed"
        if d.get("state") == "recovered":
            return f"Back at or above the threshold over the last {minutes} minutes " \
                   f"({sessions})."
        return f"Below the threshold over the last {minutes} minutes ({sessions})."
    if kind == "test":
        return "Sent from the dashboard to check this destination. No action needed."
    if kind in CRON_KINDS:
        schedule = _str(d.get("schedule"))
        on = f" (schedule: {schedule})" if schedule else ""
        if kind == "cron_recovered":
            return f"Its check-ins are ok again{on}; the incident is resolved."
        return f"{_num(d.get('failures', 1))} failed check-in(s) in a row{_where(d)}{on}."
    if kind == "spike_protection":
        if d.get("state") == "stopped":
            return "Its volume fell back under the cap; it is no longer capped."
        return (f"It sent {_num(d.get('rate', '?'))} records/s, over "
                f"{_num(d.get('multiple', '?'))} times its baseline of "
                f"{_num(d.get('baseline', '?'))}/s; the excess is answered 429.")
    return ""


def _link(public_url: str | None, project: str, kind: str, subject: str,
          d: Mapping[str, Any]) -> str | None:
    if not public_url:
        return None
    base = f"{public_url.rstrip('/')}/projects/{quote(project, safe='')}"
    group_id = _int(d.get("group_id"))
    if kind in GROUP_KINDS and group_id is not None:
        return f"{base}/errors/{group_id}"
    if kind == "deploy_worse":
        env = _str(d.get("environment") or d.get("env"))
        return f"{base}/deploys" + (f"?{urlencode({'env': env})}" if env else "")
    if kind in ("error_rate", "latency"):
        return f"{base}/performance?{urlencode({'service': _str(d.get('service')) or subject})}"
    if kind in CRASH_FREE:
        return f"{base}/releases/{quote(subject, safe='')}"
    if kind in CRON_KINDS:
        return f"{base}/crons/{quote(subject, safe='')}"
    if kind == "spike_protection":
        return f"{base}/stats"
    return f"{base}/errors"


def iso(us: int | None) -> str | None:
    if us is None:
        return None
    return datetime.fromtimestamp(us / 1_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# The webhook's JSON.

def _alert_json(alert: Alert) -> dict[str, Any]:
    d = alert.details
    group = deploy = None
    if alert.kind in GROUP_KINDS:
        group = {"fingerprint": alert.subject, "id": _int(d.get("group_id")),
                 "exception_class": _str(d.get("exception_class")),
                 "message": _str(d.get("message"))}
    elif alert.kind == "deploy_worse":
        reasons = d.get("reasons")
        deploy = {"id": alert.subject, "git_sha": _str(d.get("git_sha")),
                  "version": _str(d.get("version")), "environment": alert.environment,
                  "reasons": [str(r) for r in reasons] if isinstance(reasons, list) else []}
    state = d.get("state") if alert.kind in ("error_rate", "latency", *CRASH_FREE) else None
    monitor = None
    if alert.kind in CRON_KINDS:
        state = "recovered" if alert.kind == "cron_recovered" else "firing"
        monitor = {"slug": alert.subject, "id": _int(d.get("monitor_id")),
                   "incident_id": _int(d.get("incident_id")),
                   "reason": _str(d.get("reason")), "schedule": _str(d.get("schedule"))}
    return {
        "schema": SCHEMA, "type": "alert", "id": alert.id, "kind": alert.kind,
        "project": {"id": alert.project_id, "name": alert.project},
        "title": alert.title, "summary": alert.summary, "subject": alert.subject,
        "group": group, "deploy": deploy, "monitor": monitor, "state": _str(state),
        "counts": alert.counts,
        "first_seen": iso(alert.first_seen_us), "last_seen": iso(alert.last_seen_us),
        "environment": alert.environment, "release": alert.release,
        "service": alert.service, "link": alert.link, "details": alert.details,
    }


def webhook_body(message: Message) -> bytes:
    if isinstance(message, Alert):
        document = _alert_json(message)
    else:
        document = {"schema": SCHEMA, "type": "digest", "id": message.id,
                    "count": message.count, "more": message.more,
                    "alerts": [_alert_json(a) for a in message.alerts]}
    # Sorted and compact: the same message is the same bytes, so the same signature
    # input on every retry.
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str).encode()
