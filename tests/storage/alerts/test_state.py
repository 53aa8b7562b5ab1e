"""Threshold rules' state (storage/alerts/state.py) on SQLite and PostgreSQL: a fact
when the state changes and only then, none for a recovery never preceded by firing,
and one of two collectors crossing at once."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from storage.alerts import outbox
from storage.alerts import state as alert_state
from storage.alerts.state import FIRING, OK
from storage.store import Store
from tests.support.postgres import wait_until_blocked

NOW = 1_795_168_800_000_000


def move(store: Store, state: str, at_us: int, subject: str = "checkout") -> bool:
    return alert_state.set_state(store, 1, "rule-1", subject, state, at_us, "error_rate",
                                 f"error_rate:rule-1:{subject}:{at_us}",
                                 {"state": "firing" if state == FIRING else "recovered"})


def kinds(store: Store) -> list[tuple[str, str]]:
    return [(f.subject, f.details["state"]) for f in outbox.facts(store, range(1, 100))]


def test_a_fact_when_crossed_and_when_recovered_and_only_then(store: Store) -> None:
    assert move(store, OK, NOW) is False  # never fired: nothing recovers
    assert move(store, FIRING, NOW + 1) is True
    assert move(store, FIRING, NOW + 2) is False  # still firing
    assert alert_state.states(store, "rule-1") == {(1, "checkout"): FIRING}
    assert move(store, OK, NOW + 3) is True
    assert move(store, OK, NOW + 4) is False
    assert move(store, FIRING, NOW + 5) is True  # crossed again
    assert kinds(store) == [("checkout", "firing"), ("checkout", "recovered"),
                            ("checkout", "firing")]
    assert alert_state.states(store, "rule-1") == {(1, "checkout"): FIRING}
    assert alert_state.states(store, "rule-2") == {}
    with pytest.raises(ValueError, match="state must be"):
        move(store, "maybe", NOW)


@pytest.mark.postgres
def test_two_collectors_crossing_at_once_record_one_fact(pg_url: str) -> None:
    """The second one's upsert waits for the first's commit, then finds it firing."""
    store = Store(pg_url)
    store.upgrade()
    first = store.writer.connect()
    transaction = first.begin()
    first.execute(sa.text("INSERT INTO alert_state VALUES (1, 'rule-1', 'checkout', "
                          "'firing', :at)"), {"at": NOW})
    moved: list[bool] = []
    thread = threading.Thread(target=lambda: moved.append(move(store, FIRING, NOW + 1)))
    thread.start()
    wait_until_blocked(store, thread)  # until the second waits on the first's lock
    transaction.commit()
    first.close()
    thread.join()
    assert moved == [False] and kinds(store) == []
    store.dispose()
