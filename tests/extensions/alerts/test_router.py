"""Routing: a fact to each destination of every rule it matches, once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from extensions.alerts.router import Router, route
from extensions.alerts.rules import Rule


@dataclass(frozen=True)
class Fact:
    id: int
    project_id: int
    kind: str
    subject: str
    dedupe_key: str
    details: dict[str, Any] = field(default_factory=dict)


RULES = [Rule("new_group", ("hook", "slack")), Rule("new_group", ("slack", "mail"),
                                                     env="production"),
         Rule("regression", ("hook",), project="acme")]
DESTINATIONS = {"hook", "slack", "mail"}


def test_each_destination_once_per_fact_across_rules() -> None:
    fact = Fact(1, 1, "new_group", "fp", "new_group:fp", {"environment": "production"})
    assert route([fact], RULES, DESTINATIONS, {1: "acme"}, {}) == [
        (1, "hook"), (1, "slack"), (1, "mail")]


def test_unmatched_and_ignored_facts_get_no_delivery() -> None:
    facts = [Fact(1, 2, "regression", "fp", "regression:fp:1"),  # project "other"
             Fact(2, 1, "new_group", "fp2", "new_group:fp2"),  # ignored group
             Fact(3, 1, "deploy_worse", "7", "deploy_worse:7")]  # no rule on it
    assert route(facts, RULES, DESTINATIONS, {1: "acme", 2: "other"},
                 {(1, "fp2"): "ignored"}) == []


def test_a_test_fact_goes_to_its_destination_only_known_here_or_not_yet() -> None:
    # A destination added on another collector's dashboard is not known here until
    # the settings are read again: the sender waits for it (test_pacing, test_delivery).
    fact = Fact(5, 1, "test", "mail", "test:u", {"destination": "mail"})
    elsewhere = Fact(6, 1, "test", "7/hook", "test:v", {"destination": "7/hook"})
    nowhere = Fact(7, 1, "test", "", "test:w", {})
    assert route([fact, elsewhere, nowhere], RULES, DESTINATIONS, {1: "acme"}, {}) == [
        (5, "mail"), (6, "7/hook")]


class Lookup:
    def __init__(self) -> None:
        self.asked: list[Any] = []

    def project_names(self, ids: set[int]) -> dict[int, str]:
        self.asked.append(("projects", ids))
        return {1: "acme"}

    def group_statuses(self, groups: set[tuple[int, str]]) -> dict[tuple[int, str], str]:
        self.asked.append(("groups", groups))
        return {(1, "fp"): "ignored"}


def test_the_router_looks_up_names_and_statuses_of_the_facts_it_is_given() -> None:
    lookup = Lookup()
    router = Router(RULES, DESTINATIONS, lookup)
    facts = [Fact(1, 1, "new_group", "fp", "new_group:fp"),
             Fact(2, 1, "regression", "fp3", "regression:fp3:1")]
    assert router.decide(facts) == [(2, "hook")]
    assert lookup.asked == [("projects", {1}), ("groups", {(1, "fp"), (1, "fp3")})]
    assert router.decide([]) == []
