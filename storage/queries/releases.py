"""Release health read from the session rollups (storage/writer/sessions.py,
docs/release-health.md): per release and environment, over a range of whole minutes,
the sessions and how they ended, the distinct users and those who crashed, and
from those the crash-free rates and the release's adoption.

- crash-free sessions: 1 - crashed / sessions (abnormal and errored sessions are not
  crashes, as in Sentry);
- crash-free users: 1 - users with a crashed session / users; users are counted
  over the whole hours the range touches (session_users is kept per hour);
- adoption: the release's share of the sessions of its environment (or of the
  project, for a release over every environment) over the 24 hours before `now`.
A rate is None when there is nothing to divide by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, literal, select

from storage import schema
from storage.store import Store

_R, _U = schema.session_rollups, schema.session_users
HOUR, DAY = 3600, 86_400
ALL = None  # an environment of None: every environment together
MAX_RELEASES = 200


@dataclass(frozen=True, slots=True)
class Health:
    release: str
    environment: str | None  # None: every environment together
    sessions: int
    exited: int
    errored: int
    crashed: int
    abnormal: int
    users: int
    crashed_users: int
    errored_users: int
    crash_free_sessions: float | None
    crash_free_users: float | None
    adoption: float | None  # share of the sessions of the last 24 h
    first_minute_s: int
    last_minute_s: int


def _rate(bad: int, total: int) -> float | None:
    return None if total <= 0 else 1.0 - bad / total


def _sums() -> list[Any]:
    return [func.coalesce(func.sum(getattr(_R.c, name)), 0).label(name)
            for name in ("started", "exited", "errored", "crashed", "abnormal")]


def health(store: Store, project_id: int, start_s: int, end_s: int, now_s: int,
           release: str | None = None, environment: str | None = None,
           by_environment: bool = True) -> list[Health]:
    """Per release (and environment, when `by_environment`) with sessions started in
    [start_s, end_s): the most sessions first. `release`, `environment`: only those."""
    key = [_R.c.release, _R.c.environment] if by_environment else [_R.c.release]
    where = [_R.c.project_id == project_id, _R.c.minute >= start_s, _R.c.minute < end_s]
    if release is not None:
        where.append(_R.c.release == release)
    if environment is not None:
        where.append(_R.c.environment == environment)
    query = (select(*key, *_sums(), func.min(_R.c.minute).label("first"),
                    func.max(_R.c.minute).label("last"))
             .where(and_(*where)).group_by(*key)
             .order_by(func.sum(_R.c.started).desc(), _R.c.release).limit(MAX_RELEASES))
    with store.reader.connect() as conn:
        found = conn.execute(query).all()
        if not found:
            return []
        users = _users(conn, project_id, start_s, end_s, release, environment,
                       by_environment)
        adoption = _adoption(conn, project_id, now_s, environment, by_environment)
    out = []
    for row in found:
        env = row.environment if by_environment else None
        u = users.get((row.release, env), (0, 0, 0))
        shares = adoption.get(env)
        share = None
        if shares:
            total = sum(shares.values())
            share = shares.get(row.release, 0) / total if total else None
        sessions, crashed = int(row.started), int(row.crashed)
        out.append(Health(
            release=row.release, environment=env, sessions=sessions, exited=int(row.exited),
            errored=int(row.errored), crashed=crashed, abnormal=int(row.abnormal),
            users=u[0], crashed_users=u[1], errored_users=u[2],
            crash_free_sessions=_rate(crashed, sessions), crash_free_users=_rate(u[1], u[0]),
            adoption=share, first_minute_s=int(row.first), last_minute_s=int(row.last)))
    return out


def _users(conn: Any, project_id: int, start_s: int, end_s: int, release: str | None,
           environment: str | None, by_environment: bool
           ) -> dict[tuple[str, str | None], tuple[int, int, int]]:
    """(users, crashed users, errored users) per (release, environment or None), over
    the whole hours touching [start_s, end_s): a user is counted once however many
    hours and sessions they had; crashed if any of them crashed."""
    where = [_U.c.project_id == project_id, _U.c.hour >= start_s // HOUR * HOUR,
             _U.c.hour < end_s]
    if release is not None:
        where.append(_U.c.release == release)
    if environment is not None:
        where.append(_U.c.environment == environment)
    env = _U.c.environment if by_environment else literal("")
    per_user = (select(_U.c.release.label("release"), env.label("environment"),
                       _U.c.user_key, func.max(_U.c.crashed).label("crashed"),
                       func.max(_U.c.errored).label("errored"))
                .where(and_(*where)).group_by(_U.c.release, env, _U.c.user_key).subquery())
    query = select(per_user.c.release, per_user.c.environment, func.count(),
                   func.sum(per_user.c.crashed), func.sum(per_user.c.errored)
                   ).group_by(per_user.c.release, per_user.c.environment)
    return {(r, e if by_environment else None): (int(n), int(c or 0), int(er or 0))
            for r, e, n, c, er in conn.execute(query)}


def _adoption(conn: Any, project_id: int, now_s: int, environment: str | None,
              by_environment: bool) -> dict[str | None, dict[str, int]]:
    """Sessions per release over the 24 h before `now_s`, per environment (or None
    for every environment together)."""
    end = now_s // 60 * 60 + 60
    where = [_R.c.project_id == project_id, _R.c.minute >= end - DAY, _R.c.minute < end]
    if environment is not None:
        where.append(_R.c.environment == environment)
    env = _R.c.environment if by_environment else literal("")
    query = (select(env.label("environment"), _R.c.release, func.sum(_R.c.started))
             .where(and_(*where)).group_by(env, _R.c.release))
    out: dict[str | None, dict[str, int]] = {}
    for e, rel, n in conn.execute(query):
        out.setdefault(e if by_environment else None, {})[rel] = int(n or 0)
    return out


@dataclass(frozen=True, slots=True)
class Window:
    """Sessions started in a window, whatever their release (the Deploys page's
    before/after comparison)."""

    start_s: int
    end_s: int
    sessions: int
    crashed: int
    crash_free_sessions: float | None


def window(store: Store, project_id: int, start_s: int, end_s: int,
           environment: str | None = None) -> Window:
    where = [_R.c.project_id == project_id, _R.c.minute >= start_s, _R.c.minute < end_s]
    if environment is not None:
        where.append(_R.c.environment == environment)
    query = select(func.coalesce(func.sum(_R.c.started), 0),
                   func.coalesce(func.sum(_R.c.crashed), 0)).where(and_(*where))
    with store.reader.connect() as conn:
        sessions, crashed = conn.execute(query).one()
    return Window(start_s, end_s, int(sessions), int(crashed),
                  _rate(int(crashed), int(sessions)))


@dataclass(frozen=True, slots=True)
class Point:
    start_s: int
    sessions: int
    crashed: int
    crash_free_sessions: float | None


def series(store: Store, project_id: int, release: str, start_s: int, end_s: int,
           step_s: int, environment: str | None = None) -> list[Point]:
    """A release's sessions and crashes per `step_s` (a multiple of 60), oldest first;
    only the steps with sessions."""
    step = _R.c.minute - (_R.c.minute % step_s)
    where = [_R.c.project_id == project_id, _R.c.release == release,
             _R.c.minute >= start_s, _R.c.minute < end_s]
    if environment is not None:
        where.append(_R.c.environment == environment)
    query = (select(step.label("step"), func.sum(_R.c.started), func.sum(_R.c.crashed))
             .where(and_(*where)).group_by(step).order_by(step))
    with store.reader.connect() as conn:
        return [Point(int(s), int(n), int(c), _rate(int(c), int(n)))
                for s, n, c in conn.execute(query)]
