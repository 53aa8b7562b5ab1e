"""The Alembic migrations produce exactly storage/schema/, on both engines."""

from __future__ import annotations

import ast
import sys

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from storage.partitions import include_name
from storage.queries import traces
from storage.schema import metadata
from storage.store import MIGRATIONS, Store
from tests.support.migrations import migrate

# What a migration may import: the standard library and the libraries it runs on.
# Never the application, whose code changes after the migration was written.
MIGRATION_IMPORTS = frozenset(sys.stdlib_module_names) | {"alembic", "sqlalchemy",
                                                          "opentelemetry"}


def test_migrations_import_nothing_from_the_application() -> None:
    versions = sorted((MIGRATIONS / "versions").glob("*.py"))
    assert len(versions) >= 4
    imported = {}
    for path in versions:
        for node in ast.walk(ast.parse(path.read_text())):  # imports inside functions too
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = ["." if node.level else str(node.module)]
            else:
                continue
            imported.update({name: path.name for name in names})
    assert {name: where for name, where in imported.items()
            if name.split(".")[0] not in MIGRATION_IMPORTS} == {}


def _diff(url: str) -> list[object]:
    store = Store(url)
    store.upgrade()
    store.upgrade()  # a second run is a no-op
    with store.writer.connect() as conn:
        # Day partitions are tables of no schema declaration (storage/partitions.py).
        context = MigrationContext.configure(conn, opts={"include_name": include_name})
        diff = compare_metadata(context, metadata)
    store.dispose()
    return diff


def test_migrations_match_the_schema_on_sqlite(empty_sqlite_url: str) -> None:
    assert _diff(empty_sqlite_url) == []


def test_migrations_match_the_schema_on_postgres(empty_pg_url: str) -> None:
    assert _diff(empty_pg_url) == []



OLD_SPANS = [  # two spans of one process, as revision 0002 stored them
    {"project_id": 1, "trace_id": "ab" * 16, "span_id": "01" * 8, "parent_span_id": "",
     "name": "GET /x", "kind": 2, "start_ns": 10, "end_ns": 30, "status_code": 2,
     "status_message": "boom", "service_name": "web", "scope_name": "flask",
     "category": "http", "resource_attributes": {"service.name": "web", "pid": 4},
     "attributes": {"http.request.method": "GET", "n": 1.5, "l": [1, "a"], "m": {"k": True}},
     "semantic": {"http.request.method": "GET"},
     "events": [{"name": "exception", "time_unix_nano": 20,
                 "attributes": {"exception.type": "KeyError"}}]},
    {"project_id": 1, "trace_id": "ab" * 16, "span_id": "02" * 8, "parent_span_id": "01" * 8,
     "name": "SELECT", "kind": 3, "start_ns": 12, "end_ns": 14, "status_code": 0,
     "status_message": "", "service_name": "web", "scope_name": "db", "category": "database",
     "resource_attributes": {"service.name": "web", "pid": 4},
     "attributes": {"db.system": "postgresql"}, "semantic": {"db.system.name": "postgresql"},
     "events": []},
]


def test_compact_spans_migration_carries_stored_spans_over_and_back(empty_db_url: str) -> None:
    store = Store(empty_db_url)
    migrate(store, command.upgrade, "0002")
    old = sa.table("spans", *(sa.column(c) for c in OLD_SPANS[0]
                             if c not in ("resource_attributes", "attributes", "semantic",
                                          "events")),
                   *(sa.column(c, sa.JSON()) for c in ("resource_attributes", "attributes",
                                                      "semantic", "events")))
    with store.writer.begin() as conn:
        conn.execute(old.insert(), OLD_SPANS)

    migrate(store, command.upgrade, "head")
    spans = traces.get_trace(store, 1, "ab" * 16)
    assert [(s.span_id, s.parent_span_id, s.name, s.status_message, s.category)
            for s in spans] == [("01" * 8, "", "GET /x", "boom", "http"),
                                ("02" * 8, "01" * 8, "SELECT", "", "database")]
    assert spans[0].attributes == OLD_SPANS[0]["attributes"]
    assert spans[0].events == OLD_SPANS[0]["events"]
    assert spans[1].resource_attributes == {"service.name": "web", "pid": 4}
    with store.reader.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM resources")).scalar() == 1

    migrate(store, command.downgrade, "0002")
    with store.writer.connect() as conn:
        rows = conn.execute(old.select().order_by(old.c.span_id)).mappings().all()
    assert [dict(r) for r in rows] == OLD_SPANS
    store.dispose()


def test_logs_migration_creates_the_table_and_drops_it_back(empty_db_url: str) -> None:
    store = Store(empty_db_url)
    migrate(store, command.upgrade, "0005")
    with store.writer.connect() as conn:
        assert "logs" not in sa.inspect(conn).get_table_names()
    migrate(store, command.upgrade, "0006")
    row = {"project_id": 1, "record_key": b"k" * 16, "time_ns": 2**63 - 1, "observed_ns": 1,
           "severity_number": 24, "severity_text": "FATAL4", "trace_id": b"", "span_id": b"",
           "flags": 2**32 - 1, "event_name": "e", "service_name": "s", "scope_name": "",
           "resource_id": 2**63 - 1, "body_text": "b", "attributes": {"k": [1]},
           "body": b"\x10\x01", "received_us": 7}
    logs = sa.table("logs", *(sa.column(c) for c in row if c != "attributes"),
                    sa.column("attributes", sa.JSON()))
    with store.writer.begin() as conn:
        conn.execute(logs.insert(), [row])
        assert dict(conn.execute(logs.select()).mappings().one()) == row
        indexes = {i["name"] for i in sa.inspect(conn).get_indexes("logs")}
    assert indexes == {"ix_logs_project_time", "ix_logs_project_trace",
                       "ix_logs_project_service_time"}
    migrate(store, command.downgrade, "0005")
    with store.writer.connect() as conn:
        assert "logs" not in sa.inspect(conn).get_table_names()
    migrate(store, command.upgrade, "head")  # and up again, on a store that had it
    store.dispose()


OLD_ERROR = {"project_id": 1, "fingerprint": "f" * 32, "ts_us": 5, "received_us": 6,
             "exception_class": "KeyError", "message": "'k'", "backtrace": ["a"],
             "params": None, "source_context": None, "request_id": "r", "user_id": None,
             "trace_id": "ab" * 16, "span_id": "01" * 8}
ORIGIN = ("service", "environment", "release", "log_time_ns", "occurrence_key")
JSON_COLUMNS = ("backtrace", "tags", "exceptions", "context")


def _error_table(*names: str) -> sa.TableClause:
    return sa.table("error_events", *(sa.column(c, sa.JSON()) if c in JSON_COLUMNS
                                      else sa.column(c) for c in names))


def _error_columns(store: Store) -> list[str]:
    with store.writer.connect() as conn:
        return [c["name"] for c in sa.inspect(conn).get_columns("error_events")]


def test_error_origin_migration_adds_keys_unique_where_set_and_goes_back(empty_db_url: str) -> None:
    store = Store(empty_db_url)
    migrate(store, command.upgrade, "0005")
    old = _error_table(*OLD_ERROR)
    with store.writer.begin() as conn:
        conn.execute(old.insert(), [OLD_ERROR])

    migrate(store, command.upgrade, "0007")
    new = _error_table(*OLD_ERROR, *ORIGIN)
    with store.writer.begin() as conn:
        stored = conn.execute(new.select()).mappings().one()
        assert dict(stored) == {**OLD_ERROR, **dict.fromkeys(ORIGIN)}  # kept, no key
        keyless = {**OLD_ERROR, **dict.fromkeys(ORIGIN), "service": "web", "log_time_ns": 7}
        conn.execute(new.insert(), [keyless, keyless])  # without a key, never merged
        keyed = {**keyless, "occurrence_key": "k" * 32}
        conn.execute(new.insert(), [keyed, {**keyed, "project_id": 2}])  # per project
    with pytest.raises(sa.exc.IntegrityError), store.writer.begin() as conn:
        conn.execute(new.insert(), [keyed])
    with store.reader.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM error_events")).scalar() == 5

    migrate(store, command.downgrade, "0005")
    assert _error_columns(store) == ["id", *OLD_ERROR]
    with store.writer.begin() as conn:
        rows = conn.execute(old.select()).mappings().all()
        assert len(rows) == 5 and dict(rows[0]) == OLD_ERROR
        conn.execute(old.insert(), [OLD_ERROR])  # the old writer's insert works again


METRIC_TABLES = {"metric_series", "metric_points", "metric_cumulative",
                 "metric_request_rollups"}


def test_metrics_migration_goes_both_ways(empty_db_url: str) -> None:
    store = Store(empty_db_url)
    migrate(store, command.upgrade, "head")
    with store.writer.connect() as conn:
        assert METRIC_TABLES <= set(sa.inspect(conn).get_table_names())
    migrate(store, command.downgrade, "0007")
    with store.writer.connect() as conn:
        assert not METRIC_TABLES & set(sa.inspect(conn).get_table_names())
    migrate(store, command.upgrade, "head")
    with store.writer.connect() as conn:
        assert METRIC_TABLES <= set(sa.inspect(conn).get_table_names())
    store.dispose()


FACETED = ("tags", "level", "exceptions", "context")


def test_facets_migration_adds_columns_and_table_and_goes_back(empty_db_url: str) -> None:
    store = Store(empty_db_url)
    migrate(store, command.upgrade, "0009")
    row = {**OLD_ERROR, **dict.fromkeys(ORIGIN), "tags": {"browser": "Firefox"},
           "level": "error", "exceptions": [{"type": "E", "frames": []}],
           "context": {"user": {"id": "7"}}}
    new = _error_table(*OLD_ERROR, *ORIGIN, *FACETED)
    facet = {"project_id": 1, "fingerprint": "fp", "facet": "release", "value": "1.2",
             "count": 1, "first_seen_us": 5, "last_seen_us": 5}
    with store.writer.begin() as conn:
        conn.execute(new.insert(), [row])
        conn.execute(sa.table("error_group_facets", *map(sa.column, facet)).insert(), [facet])
        assert conn.execute(sa.text("SELECT level FROM error_events")).scalar() == "error"

    migrate(store, command.downgrade, "0008")
    assert _error_columns(store) == ["id", *OLD_ERROR, *ORIGIN]
    with store.writer.connect() as conn:
        assert "error_group_facets" not in sa.inspect(conn).get_table_names()
    # The occurrence key is still unique where set, and only there.
    old = _error_table(*OLD_ERROR, *ORIGIN)
    keyed = {**OLD_ERROR, **dict.fromkeys(ORIGIN), "occurrence_key": "k" * 32}
    with store.writer.begin() as conn:
        conn.execute(old.insert(), [{**OLD_ERROR, **dict.fromkeys(ORIGIN)}, keyed])
    with pytest.raises(sa.exc.IntegrityError), store.writer.begin() as conn:
        conn.execute(old.insert(), [keyed])

    migrate(store, command.upgrade, "head")
    assert _error_columns(store) == ["id", *OLD_ERROR, *ORIGIN, *FACETED]
    store.dispose()


ALERT_TABLES = {"alert_facts", "alert_deliveries", "alert_state"}


def test_alerts_migration_goes_both_ways(empty_db_url: str) -> None:
    store = Store(empty_db_url)
    migrate(store, command.upgrade, "0010")
    fact = {"project_id": 1, "kind": "new_group", "subject": "fp", "dedupe_key": "new_group:fp",
            "at_us": 5, "details": {"service": "web"}, "created_us": 6}
    facts = sa.table("alert_facts", *(sa.column(c) for c in fact if c != "details"),
                     sa.column("details", sa.JSON()))
    with store.writer.begin() as conn:
        conn.execute(facts.insert(), [fact, {**fact, "project_id": 2}])  # unique per project
    with pytest.raises(sa.exc.IntegrityError), store.writer.begin() as conn:
        conn.execute(facts.insert(), [fact])
    migrate(store, command.downgrade, "0009")
    with store.writer.connect() as conn:
        assert not ALERT_TABLES & set(sa.inspect(conn).get_table_names())
    migrate(store, command.upgrade, "head")
    with store.writer.connect() as conn:
        assert ALERT_TABLES <= set(sa.inspect(conn).get_table_names())
    store.dispose()


SETTINGS_TABLES = {"alert_destinations", "alert_rules"}


def test_alert_settings_migration_goes_both_ways(empty_db_url: str) -> None:
    store = Store(empty_db_url)
    migrate(store, command.upgrade, "0011")
    with store.writer.begin() as conn:
        conn.execute(sa.text("INSERT INTO projects (name, created_us) VALUES ('p', 1)"))
        pid = conn.execute(sa.text("SELECT id FROM projects")).scalar_one()
        row = {"p": pid, "n": "ops", "c": "{}", "s": b"\x01sealed"}
        insert = sa.text("INSERT INTO alert_destinations (project_id, name, type, config, "
                         "sealed, created_us) VALUES (:p, :n, 'slack', :c, :s, 1)")
        conn.execute(insert, row)
    with pytest.raises(sa.exc.IntegrityError), store.writer.begin() as conn:
        conn.execute(insert, row)  # one name per project
    migrate(store, command.downgrade, "0010")
    with store.writer.connect() as conn:
        assert not SETTINGS_TABLES & set(sa.inspect(conn).get_table_names())
    migrate(store, command.upgrade, "head")
    with store.writer.connect() as conn:
        assert SETTINGS_TABLES <= set(sa.inspect(conn).get_table_names())
    store.dispose()
