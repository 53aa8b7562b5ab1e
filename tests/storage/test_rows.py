"""Row forms (storage/rows.py): rows are built and read by name, the writer's insert
columns and the store's checks come from the same declaration as the schema."""

from __future__ import annotations

import pickle

import pytest

from storage import rows, schema
from storage.rows import Field, RowForm, WireBatch
from storage.wire.storable import Columns, Unstorable, check
from storage.writer import commit

FORM = RowForm("t", (rows.PROJECT_ID, Field("name", rows.TEXT, 4),
                     Field("note", rows.TEXT, nullable=True), Field("n", rows.INT32),
                     Field("x", rows.FLOAT), Field("received_us", rows.INT64)),
               supplied=rows.BY_WRITER)


def test_a_row_is_built_by_name_in_the_declared_order() -> None:
    assert FORM.names == ("name", "note", "n", "x")
    assert FORM.row(x=1.5, n=2, note=None, name="a") == ("a", None, 2, 1.5)
    assert FORM.getter("x", "name")(("a", None, 2, 1.5)) == (1.5, "a")
    assert FORM.position("n") == 2


@pytest.mark.parametrize("kwargs", [
    {"name": "a", "note": None, "n": 2},  # one forgotten
    {"name": "a", "note": None, "n": 2, "x": 1.0, "y": 3},  # one unknown
])
def test_a_forgotten_or_unknown_field_is_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(TypeError):
        FORM.row(**kwargs)


def test_field_names_must_be_plain_identifiers() -> None:
    with pytest.raises(ValueError):
        RowForm("t", (Field("a b", rows.TEXT),))


def test_the_checks_take_their_positions_from_the_kinds() -> None:
    columns = Columns.of(FORM)
    assert columns == Columns(text=(0,), optional_text=(1,), max_len=((0, 4),), ints=(2,),
                              int_format="i", finite=(3,))
    assert not check([FORM.row(name="abcd", note=None, n=2**31 - 1, x=0.0)], columns)
    for bad in (FORM.row(name="abcde", note=None, n=1, x=0.0),
                FORM.row(name="a", note=None, n=2**31, x=0.0),
                FORM.row(name="a", note=None, n=1, x=float("nan"))):
        with pytest.raises(Unstorable):
            check([bad], columns)


def test_a_nullable_integer_is_checked_when_set() -> None:
    form = RowForm("t", (Field("n", rows.INT64, nullable=True),
                         Field("m", rows.INT32, nullable=True)))
    columns = Columns.of(form)
    assert columns.ints == () and columns.optional_ints == ((0, "q"), (1, "i"))
    assert not check([form.row(n=None, m=None), form.row(n=2**63 - 1, m=-(2**31))], columns)
    for bad in (form.row(n=2**63, m=None), form.row(n=None, m=2**31),
                form.row(n="1", m=None)):
        with pytest.raises(Unstorable):
            check([form.row(n=1, m=1), bad], columns)


def test_the_schema_and_the_writer_use_the_declared_columns_in_order() -> None:
    for form, table in ((rows.SPANS, schema.spans), (rows.RESOURCES, schema.resources),
                        (rows.ERROR_EVENTS, schema.error_events), (rows.DEPLOYS, schema.deploys)):
        names = [c.name for c in table.columns]  # after a generated id, if any
        assert names[-len(form.columns):] == list(form.column_names)
    assert commit.ERROR_COLUMNS == ("project_id", *rows.ERROR_EVENTS.names, "received_us")


def test_the_writer_refuses_a_form_that_leaves_it_other_columns() -> None:
    with pytest.raises(ValueError, match="received_us"):
        commit._insert_columns(FORM)  # FORM leaves received_us to the writer too
    assert commit._insert_columns(FORM, received=True) == (
        "project_id", "name", "note", "n", "x", "received_us")


def test_a_wire_batch_is_named_and_pickles_as_plain_values() -> None:
    wire = rows.wire_batch(project_id=1, spans=[], errors=[("e",)], deploys=[], requests=[],
                           groups=[], reopen=[], resources=[], logs=[], metric_series=[],
                           metrics=[], metric_exemplars=[], sessions=[], feedback=[],
                           check_ins=[],
                           operations=[], edges=[], links=[], trace_facts=[],
                           detectors=[])
    assert isinstance(wire, WireBatch) and wire.errors == [("e",)]
    assert WireBatch._make(pickle.loads(pickle.dumps(tuple(wire)))) == wire
