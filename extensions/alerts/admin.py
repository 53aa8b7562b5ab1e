"""Alert settings made on a project's dashboard page: add, list, remove and test
destinations and rules (the page itself is dashboard/alerts.py; this holds the
logic, blocking, for the page to run in a thread).

Credentials never reach the database in plain text: a destination's URL (a Slack
URL is a credential; a webhook's may carry a token in its query), webhook secret
and SMTP password are sealed with `alerts.secrets_key` (secretbox.py). Without
that key nothing can be added here; the configuration file's destinations are
still listed, redacted.

A project's destinations are its own: two projects may each have an "ops" that
goes to different places. In the outbox (storage/alerts/outbox.py) such a destination is
named `<project id>/<name>` (`delivery_name`), which no configured destination's
name can be, so that rates and digests are per destination, not per name.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from extensions.alerts import destinations as dest
from extensions.alerts import forms
from extensions.alerts.secretbox import MIN_KEY_CHARS, SealError, SecretBox
from model.errors import ConfigError
from model.timeutil import now_us
from storage.alerts import outbox
from storage.alerts import settings as stored
from storage.audit.log import SYSTEM, Actor
from storage.queries import projects as pq
from storage.store import Store

TEST = "test"


def check_secrets_key(path: str, config: dict[str, Any]) -> None:
    """For the `alerts:` section's check: `secrets_key` unset or 32+ characters."""
    key = config.get("secrets_key")
    if key is not None and (not isinstance(key, str) or len(key) < MIN_KEY_CHARS):
        # Never echoed: it is a secret.
        raise ConfigError(f"{path}.secrets_key must be a string of at least "
                          f"{MIN_KEY_CHARS} characters")


def delivery_name(project_id: int, name: str) -> str:
    return f"{project_id}/{name}"


def _context(project_id: int, name: str) -> str:
    """What a sealed value is bound to: copied to another row, it does not open."""
    return f"alert destination {project_id}/{name}"


@dataclass(frozen=True, slots=True)
class ShownDestination:
    id: int | None  # None: from the configuration file
    name: str
    type: str
    shown: dict[str, Any]  # destinations.redacted: no credential
    problem: str | None = None  # why it cannot be used, e.g. sealed under another key


@dataclass(frozen=True, slots=True)
class Overview:
    can_add: bool  # alerts.secrets_key is set
    file_destinations: list[ShownDestination]
    destinations: list[ShownDestination]
    rules: list[stored.StoredRule]


@dataclass(frozen=True, slots=True)
class Runtime:
    """Every project's dashboard-made settings, ready for the alerts extension:
    destination configs named by `delivery_name` with their credentials opened,
    rules limited to their project and naming destinations the same way."""

    destinations: list[dict[str, Any]]
    rules: list[dict[str, Any]]
    problems: list[str]  # destinations left out (never a credential in the text)


class AlertsAdmin:
    def __init__(self, store: Store, config: dict[str, Any]) -> None:
        self.store = store
        key = config.get("secrets_key")
        self.box = SecretBox(key) if key else None
        self.file_destinations: list[dict[str, Any]] = list(config.get("destinations") or [])
        self.on_change: Callable[[], None] | None = None  # see `changed`

    def __repr__(self) -> str:
        return "AlertsAdmin()"

    def _file_names(self) -> set[str]:
        return {str(item.get("name")) for item in self.file_destinations}

    def _problem(self, row: stored.StoredDestination) -> str | None:
        if self.box is None:
            return "alerts.secrets_key is not set: it cannot be sent to"
        try:
            self.box.open(row.sealed, _context(row.project_id, row.name))
        except SealError as exc:
            return (f"its credentials were {exc}: remove it and add it again"
                    if exc.wrong_key else f"its credentials do not open ({exc})")
        return None

    def overview(self, project_id: int) -> Overview:
        files = [ShownDestination(None, str(item.get("name")), str(item.get("type")),
                                  dest.redacted(item)) for item in self.file_destinations]
        mine = [ShownDestination(row.id, row.name, row.type, row.config, self._problem(row))
                for row in stored.destinations(self.store, project_id)]
        return Overview(self.box is not None, files, mine,
                        stored.rules(self.store, project_id))

    def add_destination(self, project_id: int, form: dict[str, str],
                        actor: Actor = SYSTEM) -> int:
        """Check, seal and store a destination from the form; its id. ConfigError
        (naming the field, never echoing a credential) when it cannot be. Each change
        here is recorded in the audit log as made by `actor`."""
        if self.box is None:
            raise ConfigError("set alerts.secrets_key (32+ characters) to add destinations "
                              "here: their credentials are stored sealed with it")
        config = forms.destination_config(form)
        dest.check("destination", config)
        name = config["name"]
        if name in self._file_names():
            raise ConfigError(f"destination.name: {name!r} is a destination of the "
                              "configuration file; choose another name")
        secret = {k: v for k, v in config.items() if k in dest.SECRET_KEYS}
        sealed = self.box.seal(json.dumps(secret).encode(), _context(project_id, name))
        shown = {k: v for k, v in dest.redacted(config).items() if k not in ("name", "type")}
        added = stored.add_destination(self.store, project_id, name, config["type"], shown,
                                       sealed, actor)
        if added is None:
            raise ConfigError(f"destination.name: this project already has {name!r}")
        self.changed()
        return added

    def remove_destination(self, project_id: int, destination_id: int,
                           actor: Actor = SYSTEM) -> bool:
        mine = {d.id: d.name for d in stored.destinations(self.store, project_id)}
        if destination_id not in mine:
            return False
        users = [r.id for r in stored.rules(self.store, project_id)
                 if mine[destination_id] in r.rule.get("destinations", [])]
        if users:
            raise ConfigError(f"destination {mine[destination_id]!r} is used by rule "
                              f"{', '.join(f'#{i}' for i in users)}: remove the rule first")
        removed = stored.remove_destination(self.store, project_id, destination_id, actor)
        self.changed()
        return removed

    def add_rule(self, project_id: int, form: dict[str, str], names: list[str],
                 actor: Actor = SYSTEM) -> int:
        usable = self._file_names() | {d.name for d in
                                       stored.destinations(self.store, project_id)}
        rule = forms.rule_config(form, names)
        forms.check_rule(rule, usable)
        added = stored.add_rule(self.store, project_id, rule, actor)
        self.changed()
        return added

    def remove_rule(self, project_id: int, rule_id: int, actor: Actor = SYSTEM) -> bool:
        removed = stored.remove_rule(self.store, project_id, rule_id, actor)
        self.changed()
        return removed

    def send_test(self, project_id: int, name: str) -> str:
        """Record a `test` fact for one destination (the router sends it there only,
        the sender delivers it); its dedupe key."""
        if name in self._file_names():
            target = name
        elif any(d.name == name for d in stored.destinations(self.store, project_id)):
            target = delivery_name(project_id, name)
        else:
            raise ConfigError(f"no destination is named {name!r}")
        key = f"{TEST}:{uuid.uuid4().hex}"
        outbox.record_fact(self.store, project_id, TEST, target, key, now_us(),
                           {"destination": target, "name": name})
        self.changed()
        return key

    def changed(self) -> None:
        """Called (from any thread) after each change here: the alerts extension sets
        `on_change` to read the settings again at once, so that this collector acts
        on a change right away; the others read them within their interval."""
        if self.on_change is not None:
            self.on_change()

    def runtime(self) -> Runtime:
        """What the alerts extension loads (at start and when settings change)."""
        names = {p.id: p.name for p in pq.list_projects(self.store)}
        files = self._file_names()
        configs: list[dict[str, Any]] = []
        rules: list[dict[str, Any]] = []
        problems: list[str] = []
        for project_id, settings in stored.all_settings(self.store).items():
            usable: dict[str, str] = {name: name for name in files}
            for row in settings.destinations:
                problem = self._problem(row)
                if problem is not None:
                    problems.append(f"project {project_id} destination {row.name!r}: {problem}")
                    continue
                assert self.box is not None
                opened = json.loads(self.box.open(row.sealed, _context(project_id, row.name)))
                plain = {k: v for k, v in row.config.items() if k not in dest.SECRET_KEYS}
                full = delivery_name(project_id, row.name)
                configs.append({**plain, **opened, "name": full, "type": row.type})
                usable[row.name] = full
            for rule_row in settings.rules:
                targets = [usable[n] for n in rule_row.rule.get("destinations", [])
                           if n in usable]
                if targets and project_id in names:
                    rules.append({**rule_row.rule, "destinations": targets,
                                  "project": names[project_id]})
        return Runtime(configs, rules, problems)
