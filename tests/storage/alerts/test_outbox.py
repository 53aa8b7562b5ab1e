"""The alerts outbox (storage/alerts/outbox.py) on SQLite and PostgreSQL: facts stored once per
dedupe key, routed once (by one of two collectors at once), deliveries leased to
one sender until the lease runs out, retried, failed, sent, folded into a digest,
counted, listed and purged."""

from __future__ import annotations

import threading
from collections.abc import Iterable

import pytest
import sqlalchemy as sa

from storage import schema
from storage.alerts import outbox
from storage.alerts.outbox import Fact
from storage.store import Store

NOW = 1_795_168_800_000_000
SECOND = 1_000_000


def fact(store: Store, n: int, project_id: int = 1, kind: str = "new_group") -> bool:
    return outbox.record_fact(store, project_id, kind, f"fp-{n}", f"{kind}:fp-{n}",
                              NOW + n, {"n": n}, now_us=NOW)


def to(*destinations: str) -> outbox.Decide:
    """A router sending every fact to `destinations`."""
    def decide(facts: list[Fact]) -> Iterable[tuple[int, str]]:
        return [(f.id, d) for f in facts for d in destinations]
    return decide


def deliveries(store: Store) -> list[outbox.Delivery]:
    """Every delivery (digests too), in id order."""
    d = schema.alert_deliveries
    with store.reader.connect() as conn:
        return [outbox.Delivery(**row._mapping)
                for row in conn.execute(sa.select(d).order_by(d.c.id))]


def test_a_fact_is_stored_once_per_dedupe_key_and_project(store: Store) -> None:
    assert fact(store, 1) is True
    assert fact(store, 1) is False  # another collector found it too
    assert fact(store, 1, project_id=2) is True
    (stored,) = outbox.facts(store, [1])
    assert (stored.project_id, stored.kind, stored.subject, stored.dedupe_key, stored.at_us,
            stored.details, stored.created_us, stored.routed_us) == (
        1, "new_group", "fp-1", "new_group:fp-1", NOW + 1, {"n": 1}, NOW, None)
    with pytest.raises(ValueError, match="kind must be one of"):
        outbox.record_fact(store, 1, "nonsense", "s", "k", NOW, {})


def test_route_pending_makes_each_facts_deliveries_once(store: Store) -> None:
    for n in range(5):
        fact(store, n)
    seen: list[list[int]] = []

    def decide(facts: list[Fact]) -> list[tuple[int, str]]:
        seen.append([f.id for f in facts])
        # Two destinations for even facts (one named twice), none for odd ones.
        return [(f.id, d) for f in facts if f.details["n"] % 2 == 0
                for d in ("hook", "slack", "hook")]

    assert outbox.route_pending(store, decide, limit=3, now_us=NOW + SECOND) == 3
    assert outbox.route_pending(store, decide, limit=3, now_us=NOW + SECOND) == 2
    assert outbox.route_pending(store, decide, limit=3, now_us=NOW + SECOND) == 0
    assert seen == [[1, 2, 3], [4, 5]]
    assert all(f.routed_us == NOW + SECOND for f in outbox.facts(store, range(1, 6)))
    made = deliveries(store)
    assert sorted((d.fact_id, d.destination) for d in made) == [
        (1, "hook"), (1, "slack"), (3, "hook"), (3, "slack"), (5, "hook"), (5, "slack")]
    assert {(d.status, d.attempts, d.next_attempt_us, d.created_us, d.project_id)
            for d in made} == {("pending", 0, NOW + SECOND, NOW + SECOND, 1)}


def test_route_pending_on_two_connections_at_once_routes_each_fact_once(store: Store) -> None:
    """The first router holds its facts while it decides; the second takes the others
    (PostgreSQL skips the locked rows; SQLite's second write transaction waits for the
    first's and finds its facts routed)."""
    for n in range(6):
        fact(store, n)
    deciding, release = threading.Event(), threading.Event()
    routed: list[int] = []

    def slow(facts: list[Fact]) -> list[tuple[int, str]]:
        deciding.set()
        release.wait(60)
        return [(f.id, "hook") for f in facts]

    first = threading.Thread(target=lambda: routed.append(
        outbox.route_pending(store, slow, limit=4)))
    first.start()
    assert deciding.wait(60)
    second = threading.Thread(target=lambda: routed.append(
        outbox.route_pending(store, to("hook"), limit=100)))
    second.start()
    if store.dialect == "postgresql":  # skips, never waits
        second.join(60)
        assert not second.is_alive() and routed == [2]
    release.set()
    first.join()
    second.join()
    assert sorted(routed) == [2, 4]
    assert sorted(d.fact_id or 0 for d in deliveries(store)) == [1, 2, 3, 4, 5, 6]
    assert outbox.route_pending(store, to("hook")) == 0


def routed(store: Store, n: int, *destinations: str) -> None:
    for i in range(n):
        fact(store, i)
    outbox.route_pending(store, to(*destinations), now_us=NOW)


def test_claim_due_leases_until_the_lease_runs_out(store: Store) -> None:
    routed(store, 3, "hook")
    claimed = outbox.claim_due(store, NOW, limit=2, lease_s=30)
    assert [d.fact_id for d in claimed] == [1, 2]
    assert {d.claimed_until_us for d in claimed} == {NOW + 30 * SECOND}
    # Another sender meanwhile gets what is left, then nothing.
    assert [d.fact_id for d in outbox.claim_due(store, NOW + SECOND, 10, 30)] == [3]
    assert outbox.claim_due(store, NOW + 29 * SECOND, 10, 30) == []
    # A sender that died: its lease runs out and the deliveries are claimable again.
    again = outbox.claim_due(store, NOW + 31 * SECOND, 10, 30)
    assert [d.fact_id for d in again] == [1, 2]


def test_claim_due_takes_only_due_deliveries_of_a_destination(store: Store) -> None:
    routed(store, 2, "hook", "slack")
    (first, *_) = outbox.claim_due(store, NOW, 1, 30, destination="slack")
    assert (first.destination, first.fact_id) == ("slack", 1)
    outbox.mark_retry(store, first.id, NOW + 10 * SECOND, "HTTP 503")
    assert [d.fact_id for d in outbox.claim_due(store, NOW + SECOND, 10, 30,
                                                destination="slack")] == [2]
    assert outbox.claim_due(store, NOW + 2 * SECOND, 10, 30, destination="slack") == []
    (retried,) = outbox.claim_due(store, NOW + 10 * SECOND, 10, 30, destination="slack")
    assert (retried.id, retried.attempts, retried.last_error) == (first.id, 1, "HTTP 503")


@pytest.mark.postgres
def test_two_senders_at_once_claim_each_delivery_once(pg_url: str) -> None:
    """A claim in progress (rows locked, not committed) is skipped by another sender."""
    store = Store(pg_url)
    store.upgrade()
    routed(store, 4, "hook")
    with store.writer.connect() as conn:
        transaction = conn.begin()
        locked = conn.exec_driver_sql(
            "SELECT id FROM alert_deliveries ORDER BY id LIMIT 2 FOR UPDATE").scalars().all()
        other = outbox.claim_due(store, NOW, 10, 30)
        transaction.commit()
    assert len(locked) == 2 and sorted(d.id for d in other) == sorted(
        set(d.id for d in deliveries(store)) - set(locked))
    store.dispose()


def test_sent_failed_and_counted(store: Store) -> None:
    routed(store, 3, "hook")
    a, b, c = outbox.claim_due(store, NOW, 10, 30)
    outbox.mark_sent(store, [a.id], NOW + SECOND)
    outbox.mark_retry(store, b.id, NOW + 5 * SECOND, "timed out")
    outbox.mark_failed(store, c.id, "HTTP 404")
    outbox.mark_retry(store, c.id, NOW, "late")  # a finished delivery stays finished
    assert outbox.counts(store) == {("hook", "sent"): 1, ("hook", "pending"): 1,
                                    ("hook", "failed"): 1}
    assert outbox.sent_since(store, "hook", NOW + SECOND) == 1
    assert outbox.sent_since(store, "hook", NOW + 2 * SECOND) == 0
    assert outbox.sent_since(store, "slack", 0) == 0
    by_id = {d.id: d for d in deliveries(store)}
    assert (by_id[a.id].status, by_id[a.id].sent_us, by_id[a.id].attempts,
            by_id[a.id].claimed_until_us) == ("sent", NOW + SECOND, 1, None)
    assert (by_id[c.id].status, by_id[c.id].last_error, by_id[c.id].attempts) == (
        "failed", "HTTP 404", 1)


def test_fold_makes_one_digest_naming_every_fact(store: Store) -> None:
    routed(store, 5, "hook")
    claimed = outbox.claim_due(store, NOW, 10, 30)
    outbox.mark_sent(store, [claimed[0].id], NOW)  # sent already: not folded
    digest = outbox.fold(store, "hook", [d.id for d in claimed], NOW + SECOND, lease_s=30)
    assert digest is not None
    assert (digest.fact_id, digest.status, digest.details, digest.next_attempt_us,
            digest.claimed_until_us, digest.destination) == (
        None, "pending", {"facts": [2, 3, 4, 5]}, NOW + SECOND, NOW + 31 * SECOND, "hook")
    folded = [d for d in deliveries(store) if d.status == "folded"]
    assert [(d.fact_id, d.digest_id) for d in folded] == [(n, digest.id) for n in (2, 3, 4, 5)]
    # Nothing pending is left to fold, and another destination's deliveries are not its.
    assert outbox.fold(store, "hook", [d.id for d in claimed], NOW) is None
    outbox.mark_sent(store, [digest.id], NOW + 2 * SECOND)
    assert outbox.sent_since(store, "hook", NOW) == 2  # the digest counts as one message


def test_a_digest_folded_again_names_its_facts(store: Store) -> None:
    routed(store, 3, "hook")
    a, b, c = outbox.claim_due(store, NOW, 10, 30)
    digest = outbox.fold(store, "hook", [a.id, b.id], NOW)
    assert digest is not None
    again = outbox.fold(store, "hook", [digest.id, c.id], NOW)
    assert again is not None and again.details == {"facts": [1, 2, 3]}


def test_recent_lists_a_projects_facts_newest_first_with_their_deliveries(store: Store) -> None:
    routed(store, 3, "hook", "slack")
    fact(store, 9, project_id=2)
    latest = outbox.recent(store, 1, limit=2)
    assert [r.fact.id for r in latest] == [3, 2]
    assert [sorted(d.destination for d in r.deliveries) for r in latest] == [
        ["hook", "slack"], ["hook", "slack"]]
    assert [r.fact.subject for r in outbox.recent(store, 2)] == ["fp-9"]
    assert outbox.recent(store, 3) == []


def test_purge_removes_finished_deliveries_and_routed_facts_in_batches(store: Store) -> None:
    routed(store, 5, "hook")
    claimed = outbox.claim_due(store, NOW, 10, 30)
    outbox.mark_sent(store, [d.id for d in claimed[:4]], NOW)  # the fifth still pending
    fact(store, 7)  # not routed yet
    assert outbox.purge(store, NOW + SECOND, batch=2) == 4 + 4
    assert [f.id for f in outbox.facts(store, range(1, 10))] == [5, 6]
    assert [d.fact_id for d in deliveries(store)] == [5]
    assert outbox.purge(store, NOW) == 0  # nothing older than that
