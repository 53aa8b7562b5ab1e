"""Whether each threshold rule (error_rate, latency) is firing, per project and
subject (a service), so that it alerts once when the threshold is crossed and once
when the value recovers, however many collectors evaluate it.

`set_state` changes the state and records the fact of the change in one
transaction, and only when the state does change: the change is a single atomic
statement (an upsert, or an update, guarded by the state it leaves), so of two
collectors seeing the same crossing exactly one changes it and records the fact.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from model.timeutil import now_us as clock
from storage import schema, upsert
from storage.store import Store
from storage.writer.alert_facts import dedupe_key as stored_key

FIRING, OK = "firing", "ok"
_S, _F = schema.alert_state, schema.alert_facts


def states(store: Store, rule_key: str) -> dict[tuple[int, str], str]:
    """The state of one rule per (project id, subject) that ever fired; a subject
    absent has never fired (it is ok)."""
    query = select(_S.c.project_id, _S.c.subject, _S.c.state).where(_S.c.rule_key == rule_key)
    with store.reader.connect() as conn:
        return {(int(project_id), subject): state
                for project_id, subject, state in conn.execute(query)}


def set_state(store: Store, project_id: int, rule_key: str, subject: str, state: str,
              at_us: int, kind: str, dedupe_key: str, details: dict[str, Any]) -> bool:
    """Move the rule's state for `subject` to `state` (FIRING or OK) as of `at_us`,
    and if it changed (a subject never seen is OK), record the fact (`kind`,
    `dedupe_key`, `details`) in the same transaction. True when it changed."""
    if state not in (FIRING, OK):
        raise ValueError(f"state must be {FIRING} or {OK}")
    if state == FIRING:
        change = upsert.insert(store.dialect, _S).values(
            project_id=project_id, rule_key=rule_key, subject=subject, state=FIRING,
            since_us=at_us)
        change = change.on_conflict_do_update(
            index_elements=["project_id", "rule_key", "subject"],
            set_={"state": FIRING, "since_us": at_us},
            where=_S.c.state != FIRING).returning(_S.c.state)
    else:  # only a firing rule recovers: an absent row stays absent
        change = update(_S).where(_S.c.project_id == project_id, _S.c.rule_key == rule_key,
                                  _S.c.subject == subject, _S.c.state == FIRING).values(
            state=OK, since_us=at_us).returning(_S.c.state)
    fact = upsert.insert(store.dialect, _F).values(
        project_id=project_id, kind=kind, subject=subject, dedupe_key=stored_key(dedupe_key),
        at_us=at_us, details=details, created_us=clock(),
    ).on_conflict_do_nothing(index_elements=["project_id", "dedupe_key"])
    with store.writer.begin() as conn:
        if conn.execute(change).first() is None:
            return False
        conn.execute(fact)
    return True
