"""storage/alerts/verdicts.py on a real store (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storage import keys
from storage.alerts import state, verdicts
from storage.store import Store


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = Store(db_url)
    s.upgrade()
    with s.writer.begin() as conn:
        keys.ensure_project(conn, "p")
    yield s
    s.dispose()


def test_a_verdict_is_recorded_once_and_a_worse_one_stands(store: Store) -> None:
    assert verdicts.judged(store, 1, "deploy_worse", ["1", "2"]) == set()
    assert verdicts.settle(store, 1, "deploy_worse", "1", 10) is True
    assert verdicts.settle(store, 1, "deploy_worse", "1", 20) is False
    assert state.set_state(store, 1, "deploy_worse", "2", state.FIRING, 30,
                                 "deploy_worse", "deploy_worse:2", {})
    assert verdicts.settle(store, 1, "deploy_worse", "2", 40) is False
    assert verdicts.judged(store, 1, "deploy_worse", ["1", "2", "3"]) == {"1", "2"}
    assert state.states(store, "deploy_worse") == {(1, "1"): "ok", (1, "2"): "firing"}
    assert verdicts.judged(store, 2, "deploy_worse", ["1"]) == set()
