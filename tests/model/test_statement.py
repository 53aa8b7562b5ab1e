"""Statement normalisation on statements captured from the real drivers: SQLAlchemy's
`before_cursor_execute` hook (on sqlite3 and on psycopg), sqlite3's trace callback
(the statement as run, values inlined) and psycopg's own client-side binding."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import psycopg
import pytest
import sqlalchemy as sa

from model.statement import Normalizer, normalize
from tests.support.postgres import ADMIN_DSN, require_postgres


def _items(metadata: sa.MetaData) -> sa.Table:
    return sa.Table("items", metadata, sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("name", sa.String(50)), sa.Column("kind", sa.String(20)),
                    sa.Column("active", sa.Boolean))


def _captured(engine: sa.Engine) -> list[str]:
    """The statements SQLAlchemy sends for a few typical queries, as the hook sees them."""
    seen: list[str] = []
    sa.event.listen(engine, "before_cursor_execute",
                    lambda _c, _cur, statement, *_rest: seen.append(statement))
    metadata = sa.MetaData()
    items = _items(metadata)
    with engine.begin() as conn:
        metadata.create_all(conn)
        seen.clear()
        # insertmanyvalues: one INSERT with a VALUES row per item (RETURNING asks it).
        conn.execute(sa.insert(items).returning(items.c.id),
                     [{"name": f"n{i}", "kind": "a", "active": True} for i in range(5)])
        conn.execute(sa.select(items.c.name).where(items.c.id.in_([1, 2, 3]),
                                                   items.c.kind == "a"))
        conn.execute(sa.select(items.c.name).where(items.c.id.in_([4, 5]),
                                                   items.c.kind == "b"))
        conn.execute(sa.update(items).where(items.c.id == 2).values(name="x"))
        conn.execute(sa.text("SELECT count(*) FROM items -- how many\n WHERE active"))
        metadata.drop_all(conn)
    return seen


def test_sqlalchemy_on_sqlite3() -> None:
    shapes = [normalize(s) for s in _captured(sa.create_engine("sqlite://"))]
    assert shapes[:5] == [
        "INSERT INTO items (name, kind, active) VALUES (?) RETURNING id",
        "SELECT items.name FROM items WHERE items.id IN (?) AND items.kind = ?",
        "SELECT items.name FROM items WHERE items.id IN (?) AND items.kind = ?",
        "UPDATE items SET name=? WHERE items.id = ?",
        "SELECT count(*) FROM items WHERE active",
    ]


@pytest.mark.postgres
def test_sqlalchemy_on_psycopg_gives_the_shapes_it_gives_on_sqlite3() -> None:
    require_postgres()
    url = "postgresql+psycopg://" + ADMIN_DSN.split("://", 1)[1]
    engine = sa.create_engine(url)
    try:
        captured = _captured(engine)
    finally:
        engine.dispose()
    assert any("%(" in s for s in captured)  # psycopg's named marks, as sent
    # The same queries, whatever the driver's marks and spacing.
    assert ([normalize(s) for s in captured][1:5]
            == [normalize(s) for s in _captured(sa.create_engine("sqlite://"))][1:5])


@pytest.fixture
def traced() -> Iterator[tuple[sqlite3.Connection, list[str]]]:
    conn = sqlite3.connect(":memory:")
    seen: list[str] = []
    conn.set_trace_callback(seen.append)  # each statement as run, values inlined
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL, "
                 "data BLOB, active BOOLEAN)")
    seen.clear()
    yield conn, seen
    conn.close()


def test_sqlite3_statements_as_run(traced: tuple[sqlite3.Connection, list[str]]) -> None:
    conn, seen = traced
    conn.executemany("INSERT INTO items (name, price, data, active) VALUES (?, ?, ?, ?)",
                     [("it's", 1.5, b"\x00\xff", True), ("b", -2, None, False)])
    conn.execute("SELECT * FROM items WHERE id IN (1, 2, 3) AND name = ? /* hint */",
                 ("it's",))
    conn.execute("SELECT * FROM items WHERE id IN (7)  AND name = 'x'")
    conn.execute("SELECT * FROM items WHERE price > 1e3 AND data = X'00ff' AND active = TRUE")
    conn.execute("SELECT * FROM items WHERE name IS NULL LIMIT 10 OFFSET 5")
    seen = [s for s in seen if not s.startswith(("BEGIN", "COMMIT"))]
    assert "'it''s'" in seen[0] and "X'00FF'" in seen[0].upper()  # literals, as run
    assert [normalize(s) for s in seen] == [
        "INSERT INTO items (name, price, data, active) VALUES (?)",
        "INSERT INTO items (name, price, data, active) VALUES (?)",
        "SELECT * FROM items WHERE id IN (?) AND name = ?",
        "SELECT * FROM items WHERE id IN (?) AND name = ?",
        "SELECT * FROM items WHERE price > ? AND data = ? AND active = ?",
        "SELECT * FROM items WHERE name IS NULL LIMIT ? OFFSET ?",
    ]
    assert normalize("SELECT 1 FROM t WHERE a is  not\nnull AND b = NULL") == (
        "SELECT ? FROM t WHERE a is not null AND b = ?")


@pytest.mark.postgres
def test_psycopg_statements_bound_and_with_marks() -> None:
    require_postgres()
    with psycopg.connect(ADMIN_DSN, cursor_factory=psycopg.ClientCursor) as conn:
        cur = conn.cursor()
        cur.execute("CREATE TEMP TABLE items (id int, name text, tags text[])")
        query = ("SELECT name FROM items WHERE id = ANY(%s) AND name = %s "
                 "AND tags @> %s::text[] AND id IN (%s, %s)")
        params = ([1, 2], "O'Brien", ["a"], 4, 0x10)
        bound = cur.mogrify(query, params)  # what this cursor sends
        cur.execute(bound)
        rendered = cur.mogrify("INSERT INTO items VALUES (%s, %s, %s), (%s, %s, %s)",
                               (1, "a", None, 2, "b", None))
        cur.execute(rendered)
        dollar = "SELECT $$a 'quoted' $$ || name FROM items WHERE id = $1"
        cur.execute(dollar.replace("$1", "1"))
    assert "'O''Brien'" in bound
    shape = "SELECT name FROM items WHERE id = ANY(?) AND name = ? AND tags @> ? AND id IN (?)"
    assert normalize(bound) == shape
    assert normalize(query) == shape  # the statement with psycopg's marks, before binding
    assert normalize(rendered) == "INSERT INTO items VALUES (?)"
    assert normalize(dollar) == "SELECT ? || name FROM items WHERE id = ?"


def test_comments_space_and_odd_literals() -> None:
    assert normalize("select  1.5e-3, .5, 0xFF, -7 /* a\n b */ from t -- end") == (
        "select ?, ?, ?, ? from t")
    assert normalize("SELECT a1, t2.b_3 FROM t2 WHERE x = E'a\\'b' AND y = N'z'") == (
        "SELECT a1, t2.b_3 FROM t2 WHERE x = ? AND y = ?")
    assert normalize('SELECT "select 1", `k` FROM "t" WHERE v = :v AND w = ?1') == (
        'SELECT "select 1", `k` FROM "t" WHERE v = ? AND w = ?')
    assert normalize("SELECT $tag$ x $tag$") == "SELECT ?"
    assert normalize("INSERT INTO t VALUES (1, now()), (2, now()), (3, now())") == (
        "INSERT INTO t VALUES (?, now())")


def test_normalizer_remembers_and_stays_bounded() -> None:
    normalizer = Normalizer(size=2)
    assert normalizer("SELECT 1") == "SELECT ?"
    for i in range(10):
        assert normalizer(f"SELECT {i} FROM t") == "SELECT ? FROM t"
    assert len(normalizer._seen) <= 2
