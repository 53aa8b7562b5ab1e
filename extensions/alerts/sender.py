"""Sending: the deliveries due, each to its destination, at least once.

Every turn (poll_s) the sender claims the deliveries due (storage.alerts.outbox.claim_due:
a lease, taken with SKIP LOCKED on PostgreSQL, so two collectors never hold one
delivery at once), and per destination asks how many messages it got in the last
minute, from any collector (storage.alerts.outbox.sent_since). What fits the rate is sent;
beyond it the rest are folded into one digest (pacing.plan, storage.alerts.outbox.fold),
sent in the slot kept for it; and what has no slot at all keeps its lease until it
lapses, about when the minute frees a slot.

A delivery is marked sent only after its destination said so. A collector killed
mid-send leaves the lease to lapse and another turn (its own after a restart, or
another collector's) sends it again: at least once, never lost. Receivers
deduplicate on the alert id, the same on every attempt.

Outcomes: Sent marks it sent; Retry schedules the next attempt (the receiver's
Retry-After, else backoff with full jitter); Failed, or a Retry past give_up_s,
marks it failed, counted in /metrics and shown in the dashboard.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from extensions.alerts import pacing
from extensions.alerts.message import Alert, Digest, alert_from
from extensions.alerts.rules import GROUP_KINDS
from model.timeutil import now_us
from runtime.retry import Failed, Retry, SendResult, Sent
from runtime.telemetry import ALERTS
from storage.alerts import lookup, outbox
from storage.alerts.outbox import Delivery, Fact
from storage.store import Store

log = logging.getLogger(__name__)

CLAIM = 1000  # deliveries claimed per turn: a burst is folded in one or two turns
MINUTE_US = 60_000_000
# How long a delivery to a destination this collector does not know waits: about
# the time the extension takes to read the dashboard's settings again.
UNKNOWN_WAIT_S = 10.0
# How long a claimed delivery is held: longer than any send takes (the destinations'
# timeouts are seconds), and about the rate's minute, so that what had no slot
# comes back when one frees.
LEASE_S = 60.0


class Destination(Protocol):
    name: str

    async def send(self, message: Alert | Digest) -> SendResult: ...


@dataclass(frozen=True)
class Settings:
    rate_per_minute: int
    first_s: float
    max_s: float
    give_up_s: float
    public_url: str | None

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> Settings:
        retry = config["retry"]
        return cls(int(config["rate_per_minute"]), float(retry["first_s"]),
                   float(retry["max_s"]), float(retry["give_up_s"]), config.get("public_url"))


class Sender:
    def __init__(self, store: Store, destinations: Mapping[str, Destination],
                 settings: Settings, rng: random.Random | None = None,
                 clock: Callable[[], int] = now_us) -> None:
        self.store = store
        self.destinations = dict(destinations)
        self.settings = settings
        self.rng = rng or random.Random()
        self.clock = clock

    async def run_once(self) -> int:
        """One turn; returns how many messages were attempted."""
        now = self.clock()
        due = await asyncio.to_thread(outbox.claim_due, self.store, now, CLAIM, LEASE_S)
        if not due:
            return 0
        by_destination: dict[str, list[Delivery]] = defaultdict(list)
        for delivery in due:
            by_destination[delivery.destination].append(delivery)
        sending: list[Delivery] = []
        for name, deliveries in sorted(by_destination.items()):
            if name not in self.destinations:
                # Added on the dashboard and routed by a collector that read the
                # settings before this one did, or removed since: tried again once
                # the settings are read again, failed once given up.
                for delivery in deliveries:
                    await self._record(delivery, Retry(UNKNOWN_WAIT_S, "no such destination"))
                continue
            recent = await asyncio.to_thread(outbox.sent_since, self.store, name,
                                             now - MINUTE_US)
            plan = pacing.plan(deliveries, self.settings.rate_per_minute - recent)
            sending.extend(plan.send)
            if plan.fold:
                # Leased to this turn, so it goes out in the slot kept for it.
                digest = await asyncio.to_thread(outbox.fold, self.store, name,
                                                 [d.id for d in plan.fold], now, LEASE_S)
                ALERTS.labels(name, "folded").inc(len(plan.fold))
                if digest is not None:
                    sending.append(digest)
        if not sending:
            return 0
        messages = await asyncio.to_thread(self._messages, sending)
        await asyncio.gather(*(self._deliver(d, messages[d.id]) for d in sending))
        return len(sending)

    # Messages.

    def _messages(self, deliveries: Sequence[Delivery]) -> dict[int, Alert | Digest]:
        """Each delivery's message, its facts read in one query."""
        wanted: dict[int, list[int]] = {d.id: _fact_ids(d) for d in deliveries}
        facts = _with_group_ids(self.store, {fact.id: fact for fact in outbox.facts(
            self.store, sorted({i for ids in wanted.values() for i in ids}))})
        names = lookup.project_names(self.store, {f.project_id for f in facts.values()})
        rendered = {fact_id: alert_from(fact, names.get(fact.project_id, str(fact.project_id)),
                                        self.settings.public_url)
                    for fact_id, fact in facts.items()}
        messages: dict[int, Alert | Digest] = {}
        for delivery in deliveries:
            listed = [rendered[i] for i in wanted[delivery.id] if i in rendered]
            if delivery.fact_id is not None and listed:
                messages[delivery.id] = listed[0]
            else:
                # A digest; facts purged meanwhile are counted, not listed.
                messages[delivery.id] = Digest(listed, len(wanted[delivery.id]) - len(listed))
        return messages

    # Outcomes.

    async def _deliver(self, delivery: Delivery, message: Alert | Digest) -> None:
        destination = self.destinations[delivery.destination]
        try:
            outcome = await destination.send(message)
        except Exception:
            # A bug in a destination, not the receiver's answer (send() turns every
            # network failure into an outcome): retried like a 5xx, logged by name.
            log.exception("sending an alert to %s failed", delivery.destination)
            outcome = Retry(None, "internal error")
        try:
            await self._record(delivery, outcome)
        except Exception as exc:  # noqa: BLE001 - the store is down: the lease lapses
            # and the delivery is sent again (at least once).
            log.error("cannot record the outcome of an alert to %s: %s",
                      delivery.destination, type(exc).__name__)

    async def _record(self, delivery: Delivery, outcome: SendResult) -> None:
        now = self.clock()
        if isinstance(outcome, Sent):
            await asyncio.to_thread(outbox.mark_sent, self.store, [delivery.id], now)
            ALERTS.labels(delivery.destination, "sent").inc()
        elif isinstance(outcome, Failed):
            await self._fail(delivery, outcome.error)
        elif pacing.given_up(delivery.created_us, now, self.settings.give_up_s):
            await self._fail(delivery, f"gave up after {delivery.attempts + 1} attempts: "
                                       f"{outcome.error}")
        else:
            delay = pacing.retry_delay(delivery.attempts + 1, self.settings.first_s,
                                       self.settings.max_s, outcome.after_s, self.rng)
            await asyncio.to_thread(outbox.mark_retry, self.store, delivery.id,
                                    now + int(delay * 1_000_000), outcome.error)
            ALERTS.labels(delivery.destination, "retried").inc()

    async def _fail(self, delivery: Delivery, error: str) -> None:
        await asyncio.to_thread(outbox.mark_failed, self.store, delivery.id, error)
        ALERTS.labels(delivery.destination, "failed").inc()
        log.warning("an alert to %s failed for good: %s", delivery.destination, error)


def _with_group_ids(store: Store, facts: dict[int, Fact]) -> dict[int, Fact]:
    """Facts about a group, with the group's id in their details: the link in the
    alert goes to the group's page, which is by id (the writer records facts by
    fingerprint only)."""
    about = {(f.project_id, f.subject) for f in facts.values()
             if f.kind in GROUP_KINDS and "group_id" not in (f.details or {})}
    if not about:
        return facts
    ids = lookup.group_ids(store, about)
    return {fact_id: replace(fact, details={**(fact.details or {}),
                                            "group_id": ids[(fact.project_id, fact.subject)]})
            if (fact.project_id, fact.subject) in ids and fact.kind in GROUP_KINDS else fact
            for fact_id, fact in facts.items()}


def _fact_ids(delivery: Delivery) -> list[int]:
    if delivery.fact_id is not None:
        return [delivery.fact_id]
    listed: Iterable[Any] = (delivery.details or {}).get("facts") or []
    return [int(i) for i in listed]

