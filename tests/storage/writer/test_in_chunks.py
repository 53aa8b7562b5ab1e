"""storage/writer/in_chunks.py: keys cut into per-project IN lists, in the order every
collector uses."""

from __future__ import annotations

from storage.writer import in_chunks


def test_keys_are_grouped_by_project_in_order_and_cut_at_the_size() -> None:
    keys = [(2, "a"), (1, "x"), (2, "b"), (2, "c"), (1, "y")]
    assert list(in_chunks.by_project(keys, size=2)) == [
        (1, ["x", "y"]), (2, ["a", "b"]), (2, ["c"])]
    assert list(in_chunks.by_project([])) == []
