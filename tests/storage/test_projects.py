"""storage/projects.py: projects by name, listed with their active key counts."""

from __future__ import annotations

import pytest

from model.timeutil import now_us
from storage import keys, projects
from storage.store import Store


def test_create_is_once_per_name_and_list_counts_active_keys(store: Store) -> None:
    shop_id, created = projects.create_project(store, " shop ")
    assert created
    assert projects.create_project(store, "shop") == (shop_id, False)
    for bad in ("", "   ", "x" * 201):
        with pytest.raises(ValueError, match="1 to 200 characters"):
            projects.create_project(store, bad)
    keys.create_key(store, "shop")
    keys.create_key(store, "shop")
    _, revoked_id = keys.create_key(store, "api")
    keys.revoke_key(store, revoked_id)
    # A rotation leaves an already revoked key revoked: one active key.
    keys.rotate_key(store, "api", now_us() + 3_600_000_000)
    projects.create_project(store, "empty")
    listed = projects.list_projects(store)
    assert [(p.name, p.active_keys) for p in listed] == [("api", 1), ("empty", 0),
                                                         ("shop", 2)]
    assert next(p.id for p in listed if p.name == "shop") == shop_id
    assert all(p.created_us > 0 for p in listed)
