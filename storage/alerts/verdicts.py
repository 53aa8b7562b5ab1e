"""Verdicts the alert evaluators reach once per subject and never revisit: a deploy
judged worse or not (extensions/alerts/evaluate.py). They are alert_state
rows: a worse one is set firing with its fact in one transaction
(storage/alert_state.set_state); one judged not worse is recorded here as ok, so
that no collector correlates it again."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import and_, select

from storage import schema, upsert
from storage.alerts.state import OK
from storage.store import Store

IN_CHUNK = 500
_S = schema.alert_state


def judged(store: Store, project_id: int, rule_key: str, subjects: Iterable[str]
           ) -> set[str]:
    """The subjects among these that have a verdict (any state)."""
    wanted = sorted(set(subjects))
    found: set[str] = set()
    with store.reader.connect() as conn:
        for i in range(0, len(wanted), IN_CHUNK):
            found.update(conn.execute(select(_S.c.subject).where(and_(
                _S.c.project_id == project_id, _S.c.rule_key == rule_key,
                _S.c.subject.in_(wanted[i:i + IN_CHUNK])))).scalars())
    return found


def settle(store: Store, project_id: int, rule_key: str, subject: str, at_us: int) -> bool:
    """Record that `subject` was judged ok, unless it has a verdict already (then
    that one stands: a deploy judged worse stays so). True when recorded."""
    statement = upsert.insert(store.dialect, _S).values(
        project_id=project_id, rule_key=rule_key, subject=subject, state=OK, since_us=at_us,
    ).on_conflict_do_nothing(index_elements=["project_id", "rule_key", "subject"]
                             ).returning(_S.c.since_us)
    with store.writer.begin() as conn:
        return conn.execute(statement).first() is not None
