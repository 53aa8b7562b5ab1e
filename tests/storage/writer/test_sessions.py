"""Release health in the writer (storage/writer/sessions.py), on SQLite and
PostgreSQL: each session count is added once per mark (a session's start and end,
a bucket of aggregates), whether the copy comes in the same commit, a later commit
or from a second writer at once; users are distinct per hour and crash-free rates
are read back as storage/queries/releases.py computes them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from model.records import Batch, SessionCount
from receiver.sentry.sessions import decode_session, decode_sessions, mark
from storage import keys
from storage.queries import releases
from storage.store import Store
from storage.wire.batch import write_batches
from tests.support.postgres import wait_until_blocked

T0 = 1_795_168_800  # 2026-11-20T10:00:00Z
ISO = "2026-11-20T10:00:30Z"


@dataclass
class Db:
    store: Store
    project: int

    def write(self, *counts: list[SessionCount]) -> None:
        """Each list a batch, all in one commit."""
        with self.store.writer.begin() as conn:
            write_batches(conn, [Batch(self.project, sessions=list(c)) for c in counts], 7)

    def health(self, **kw: object) -> list[releases.Health]:
        return releases.health(self.store, self.project, T0 - 3600, T0 + 3600, T0 + 60,
                               **kw)  # type: ignore[arg-type]


@pytest.fixture
def db(db_url: str) -> Iterator[Db]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "shop")
    yield Db(store, project)
    store.dispose()


def session(sid: str, status: str = "ok", errors: int = 0, did: str | None = None,
            init: bool = True, release: str = "shop@1.0") -> list[SessionCount]:
    payload = {"sid": sid, "init": init, "started": ISO, "status": status, "errors": errors,
               "attrs": {"release": release, "environment": "prod"}}
    if did is not None:
        payload["did"] = did
    return decode_session(payload)


def test_a_session_counts_once_through_its_updates_and_their_retries(db: Db) -> None:
    db.write(session("a", did="u1"))  # init
    db.write(session("a", "ok", errors=1, did="u1", init=False),  # an error: no end yet
             session("a", "ok", errors=1, did="u1", init=False))
    db.write(session("a", "crashed", errors=1, did="u1", init=False))  # the end
    db.write(session("a", "crashed", errors=1, did="u1", init=False))  # retried
    db.write(session("b", "exited", did="u2"), session("b", "exited", did="u2"))
    db.write(session("c", "exited", errors=2, did="u2"))  # an exit with errors: errored
    (h,) = db.health()
    assert (h.release, h.environment, h.sessions, h.exited, h.errored, h.crashed,
            h.abnormal) == ("shop@1.0", "prod", 3, 1, 1, 1, 0)
    assert (h.users, h.crashed_users, h.errored_users) == (2, 1, 2)
    assert h.crash_free_sessions == pytest.approx(2 / 3)
    assert h.crash_free_users == pytest.approx(1 / 2)
    assert h.adoption == 1.0


def test_a_crash_without_init_is_one_session(db: Db) -> None:
    db.write(session("z", "crashed", init=False))
    (h,) = db.health()
    assert (h.sessions, h.crashed, h.crash_free_sessions, h.users) == (1, 1, 0.0, 0)


def test_aggregates_count_once_per_envelope_and_adoption_is_the_share(db: Db) -> None:
    payload = {"attrs": {"release": "shop@2.0", "environment": "prod"},
               "aggregates": [{"started": "2026-11-20T10:00:00Z", "exited": 7, "errored": 1,
                               "crashed": 2},
                              {"started": "2026-11-20T10:01:00Z", "exited": 3,
                               "abnormal": 1, "did": "u9"}]}
    first = decode_sessions(payload, b"envelope-1", 0)
    db.write(first, decode_sessions(payload, b"envelope-1", 0))  # retried in one commit
    db.write(decode_sessions(payload, b"envelope-1", 0))  # and later
    db.write(decode_sessions(payload, b"envelope-2", 0))  # another envelope: counted
    db.write(session("a", "exited"))  # one session of 1.0
    new, old = db.health()
    assert (new.release, new.sessions, new.exited, new.errored, new.crashed,
            new.abnormal) == ("shop@2.0", 28, 20, 2, 4, 2)
    assert new.crash_free_sessions == pytest.approx(1 - 4 / 28)
    assert (new.users, new.crashed_users) == (1, 0)
    assert new.adoption == pytest.approx(28 / 29)
    assert (old.release, old.sessions, old.adoption) == ("shop@1.0", 1, pytest.approx(1 / 29))
    (together,) = db.health(release="shop@2.0", by_environment=False)
    assert (together.environment, together.sessions) == (None, 28)


def test_what_cannot_be_counted_is_left_out() -> None:
    assert decode_session({"sid": "a", "started": ISO, "attrs": {}}) == []
    assert decode_session({"sid": "a", "attrs": {"release": "r"}}) == []
    assert decode_sessions({"attrs": {"release": "r"}, "aggregates": [
        {"started": ISO, "exited": -1}, {"started": ISO, "exited": True},
        {"started": ISO}, "x"]}, b"e", 0) == []
    assert mark("a", "bc") != mark("ab", "c")


@pytest.mark.postgres
def test_two_writers_at_once_count_a_session_once(pg_url: str) -> None:
    """The second writer waits on the first's uncommitted mark, then adds nothing."""
    store = Store(pg_url)
    store.upgrade()
    with store.writer.begin() as conn:
        db = Db(store, keys.ensure_project(conn, "shop"))
    other = Store(pg_url)
    try:
        first = db.store.writer.connect()
        tx = first.begin()
        write_batches(first, [Batch(db.project, sessions=session("a", "crashed"))], 7)
        done = threading.Event()

        def second() -> None:
            with other.writer.begin() as conn:
                write_batches(conn, [Batch(db.project, sessions=session("a", "crashed"))], 8)
            done.set()

        thread = threading.Thread(target=second)
        thread.start()
        wait_until_blocked(db.store, thread)
        tx.commit()
        first.close()
        thread.join(10)
        assert done.is_set()
        (h,) = db.health()
        assert (h.sessions, h.crashed) == (1, 1)
    finally:
        other.dispose()
        store.dispose()
