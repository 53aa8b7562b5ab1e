"""The writer's parameter marks (storage/writer/placeholders.py), per DBAPI driver."""

from __future__ import annotations

from storage.writer.placeholders import mark, marks


def test_each_driver_gets_its_own_mark() -> None:
    assert mark("sqlite") == "?"
    assert mark("postgresql") == "%s"


def test_a_row_of_marks() -> None:
    assert marks("sqlite", 3) == "?, ?, ?"
    assert marks("postgresql", 2) == "%s, %s"
    assert marks("sqlite", 1) == "?"
