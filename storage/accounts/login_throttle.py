"""Failed logins, counted in the database so that the limit holds however many
collectors share it: after LIMIT failures for one email address (CLIENT_LIMIT for
one client address: a team behind one NAT or proxy shares it, and should not be
locked out by one person's typos) within WINDOW_US, further attempts are refused
until the oldest of those failures leaves the window. A success clears the email's failures (not the
client's: one good password must not reset a guesser's count for every address)."""

from __future__ import annotations

from sqlalchemy import and_, delete, select

from storage import schema
from storage.store import Store

LIMIT = 5
CLIENT_LIMIT = 20
WINDOW_US = 15 * 60 * 1_000_000
_F = schema.login_failures


def retry_after(store: Store, subjects: list[str], now_us: int) -> int:
    """Seconds until any of `subjects` may try again; 0 when all may now."""
    wait = 0
    with store.reader.connect() as conn:
        for subject in subjects:
            limit = CLIENT_LIMIT if subject.startswith("client:") else LIMIT
            recent = [r.at_us for r in conn.execute(
                select(_F.c.at_us).where(and_(_F.c.subject == subject,
                                              _F.c.at_us > now_us - WINDOW_US))
                .order_by(_F.c.at_us.desc()).limit(limit))]
            if len(recent) >= limit:
                free_at = min(recent) + WINDOW_US
                wait = max(wait, -(-(free_at - now_us) // 1_000_000))
    return wait


def record_failure(store: Store, subjects: list[str], now_us: int) -> None:
    with store.writer.begin() as conn:
        conn.execute(delete(_F).where(_F.c.at_us <= now_us - WINDOW_US))
        conn.execute(_F.insert(), [{"subject": s, "at_us": now_us} for s in subjects])


def clear(store: Store, subject: str) -> None:
    with store.writer.begin() as conn:
        conn.execute(delete(_F).where(_F.c.subject == subject))
