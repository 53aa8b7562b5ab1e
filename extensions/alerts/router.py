"""Routing: each fact, once, to the destinations of every rule it matches.

`storage.alerts.outbox.route_pending` takes the facts not yet routed, in one transaction
that only one collector holds, and calls `Router.decide` for the deliveries to
insert with them; so a fact is routed exactly once, however many collectors run.
A `test` fact (the dashboard's "send a test alert") names its one destination.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from extensions.alerts.rules import GROUP_KINDS, FactLike, Rule, matches

TEST = "test"

GroupKey = tuple[int, str]  # (project id, fingerprint)


class RoutedFact(FactLike, Protocol):
    @property
    def id(self) -> int: ...
    @property
    def project_id(self) -> int: ...
    @property
    def subject(self) -> str: ...


def route(facts: Iterable[RoutedFact], rules: Sequence[Rule], destinations: set[str],
          projects: dict[int, str], statuses: dict[GroupKey, str]) -> list[tuple[int, str]]:
    """(fact id, destination) for every destination a matching rule names, once per
    fact, in the order the rules name them. Pure: the project names and group
    statuses are looked up beforehand."""
    deliveries: list[tuple[int, str]] = []
    for fact in facts:
        chosen: list[str] = []
        if fact.kind == TEST:
            # Sent where it names, known here or not yet: a destination added on
            # another collector's dashboard is known here once the settings are read
            # again, and the sender waits for that (sender.UNKNOWN_WAIT_S).
            target = (fact.details or {}).get("destination")
            if isinstance(target, str) and target:
                chosen.append(target)
        else:
            status = statuses.get((fact.project_id, fact.subject)) \
                if fact.kind in GROUP_KINDS else None
            for rule in rules:
                if matches(rule, fact, projects.get(fact.project_id), status):
                    chosen.extend(name for name in rule.destinations
                                  if name in destinations and name not in chosen)
        deliveries.extend((fact.id, name) for name in chosen)
    return deliveries


class Lookup(Protocol):
    def project_names(self, ids: set[int]) -> dict[int, str]: ...
    def group_statuses(self, groups: set[GroupKey]) -> dict[GroupKey, str]: ...


class Router:
    """The `decide` handed to storage.alerts.outbox.route_pending."""

    def __init__(self, rules: Sequence[Rule], destinations: Iterable[str],
                 lookup: Lookup) -> None:
        self.rules = list(rules)
        self.destinations = set(destinations)
        self.lookup = lookup

    def decide(self, facts: Sequence[Any]) -> list[tuple[int, str]]:
        if not facts:
            return []
        projects = self.lookup.project_names({fact.project_id for fact in facts})
        groups = {(fact.project_id, fact.subject) for fact in facts
                  if fact.kind in GROUP_KINDS}
        statuses = self.lookup.group_statuses(groups) if groups else {}
        return route(facts, self.rules, self.destinations, projects, statuses)
