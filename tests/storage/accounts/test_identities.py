"""storage/accounts/identities.py on both engines: an account made at a subject's first
login and found by the subject afterwards (not by its email), re-roled at every login,
an existing account taken over only through a verified email, a disabled account and a
claim mapping to no role refused (the latter ending the account's sessions), and an
account deleted with its identities."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from storage import schema
from storage.accounts import identities, sessions, users
from storage.accounts.identities import Claimed, Refused
from storage.store import Store

NOW = 1_800_000_000_000_000
DAY = 86_400_000_000


def who(role: str | None = "viewer", email: str = "ana@example.com", verified: bool = True,
        subject: str = "ana-1", provider: str = "corp") -> Claimed:
    return Claimed(provider, subject, email, verified, role)


def test_the_first_login_makes_the_account_and_later_ones_find_it_by_subject(
        store: Store) -> None:
    made = identities.login(store, who("member"), NOW)
    assert (made.email, made.role) == ("ana@example.com", "member")
    assert users.verify(store, "ana@example.com", identities.NO_PASSWORD) is None
    # The email changed at the provider, the role too: the same account, re-roled.
    again = identities.login(store, who("admin", email="ana.b@example.com"), NOW + 1)
    assert (again.id, again.email, again.role) == (made.id, "ana@example.com", "admin")
    assert users.find(store, "ana@example.com").role == "admin"  # type: ignore[union-attr]
    # Another provider's subject with that email and no say on it is not her.
    with pytest.raises(Refused, match="not say the address is verified"):
        identities.login(store, who(verified=False, provider="other"), NOW)
    linked = identities.login(store, who("viewer", provider="other"), NOW)
    assert linked.id == made.id and linked.role == "viewer"
    with store.reader.connect() as conn:
        rows = conn.execute(select(schema.user_identities.c.provider)
                            .order_by(schema.user_identities.c.provider)).scalars().all()
    assert rows == ["corp", "other"]


def test_no_role_ends_the_sessions_and_a_disabled_account_is_refused(store: Store) -> None:
    user = identities.login(store, who("member"), NOW)
    sessions.create(store, "session-token", NOW, NOW + DAY, user.id, "corp")
    assert sessions.lookup(store, "session-token", NOW) == sessions.Login(
        user.id, "ana@example.com", "member", "corp")
    with pytest.raises(Refused, match="no group or role"):
        identities.login(store, who(None), NOW)
    assert sessions.lookup(store, "session-token", NOW) is None
    assert users.find(store, "ana@example.com") is not None  # kept, for an admin to see
    with pytest.raises(Refused, match="no group or role"):
        identities.login(store, who(None, subject="new", email="new@example.com"), NOW)
    assert users.find(store, "new@example.com") is None
    users.disable(store, "ana@example.com", NOW)
    with pytest.raises(Refused, match="disabled"):
        identities.login(store, who("admin"), NOW)
    with pytest.raises(Refused, match="no usable email"):
        identities.login(store, who(subject="x", email=""), NOW)


def test_deleting_an_account_deletes_its_identities(store: Store) -> None:
    identities.login(store, who("member"), NOW)
    assert users.delete_user(store, "ana@example.com")
    made = identities.login(store, who("viewer"), NOW)  # a new account for the subject
    assert made.role == "viewer"


def _audit(store: Store) -> list[tuple[object, ...]]:
    a = schema.audit_log
    with store.reader.connect() as conn:
        return [tuple(r) for r in conn.execute(
            select(a.c.actor_kind, a.c.actor_id, a.c.actor_name, a.c.action, a.c.target_id,
                   a.c.before, a.c.after).order_by(a.c.id))]


def test_the_provider_is_the_actor_of_the_accounts_it_makes_and_re_roles(
        store: Store) -> None:
    provider = ("system", "oidc:corp", "identity provider corp")
    identities.login(store, who("member"), NOW)
    assert _audit(store) == [(*provider, "user.create", "ana@example.com", None,
                              {"email": "ana@example.com", "role": "member"})]
    identities.login(store, who("member"), NOW + 1)  # the same role: nothing changed
    identities.login(store, who("admin"), NOW + 2)
    assert _audit(store)[1:] == [(*provider, "user.role", "ana@example.com",
                                  {"role": "member"}, {"role": "admin"})]
    # An account taken over through a verified email is not made: only its role changes.
    users.create(store, "bo@example.com", "a password long enough", "viewer", NOW)
    identities.login(store, who("viewer", email="bo@example.com", subject="bo-1"), NOW + 3)
    assert [r[3] for r in _audit(store)] == ["user.create", "user.role", "user.create"]
    assert _audit(store)[2][:3] == ("system", None, "sounding")  # made without an actor
