"""Fixtures: the real collector on a real socket, over a real SQLite file or a
real PostgreSQL database. The databases of `sqlite_url`, `pg_url`, `db_url` and
`module_db_url` are already at the newest migration (tests/support/templates.py);
the `empty_*` ones have nothing in them, for the tests of migrating itself."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support import clients
from tests.support.postgres import fresh_database
from tests.support.server import Projects, Server, collectors, project_keys
from tests.support.templates import migrated_sqlite

# A test's database fixtures, set up before every other fixture of the test.
DATABASES = ("db_url", "pg_url", "sqlite_url", "empty_db_url", "empty_pg_url",
             "empty_sqlite_url")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--client", action="append", default=[], choices=clients.CLIENTS,
                     help="run only the tests marked as driving this real client "
                          "(tests/support/clients.py; `make test-clients`)")


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist (`make test`: --dist loadfile) hands the files out in the order of
    # `_longest_first` below, not its own (by number of tests).
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def _longest_first(items: list[pytest.Item]) -> None:
    """Files marked `long` first, then the others by number of tests, most first (as
    pytest-xdist orders them by itself). By the number of tests alone, the files of
    one or two long tests (the cron monitors' minute, the sidecar's outage, the
    checkpointer's sustained writes) came last, and the run ended with one worker
    still on them and the others idle. A file's tests keep their order."""
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)
    ordered = sorted(files.values(), key=lambda tests: (
        not any(test.get_closest_marker("long") for test in tests), -len(tests)))
    items[:] = [item for tests in ordered for item in tests]


def _clients_of(item: pytest.Item) -> set[str]:
    named = {name for mark in item.iter_markers("clients") for name in mark.args}
    unknown = named - set(clients.CLIENTS)
    if unknown:
        raise pytest.UsageError(f"{item.nodeid}: unknown clients {sorted(unknown)}: "
                                f"tests/support/clients.py names {clients.CLIENTS}")
    return named


def _only_clients(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--client NAME`: the tests marked as driving that client, and no others."""
    chosen = set(config.getoption("client"))
    kept, dropped = [], []
    for item in items:
        (kept if _clients_of(item) & chosen or not chosen else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make each test's database before the collectors that use it, so that it is
    dropped after they stopped: a fixture such as `server(start, db_url)` would
    otherwise set up `start` first, and tear the database down under a running
    collector, whose background work (alerts, source maps) then fails and logs it.
    And hand the longest files out first (`_longest_first`), keeping only a client's
    tests with `--client`."""
    _only_clients(config, items)
    _longest_first(items)
    for item in items:
        names = getattr(item, "fixturenames", None)
        if not names:
            continue
        first = [name for name in names if name in DATABASES]
        if first:
            names[:] = first + [name for name in names if name not in DATABASES]


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return migrated_sqlite(tmp_path / "sounding.db")


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_database(migrated=True) as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield migrated_sqlite(tmp_path / "sounding.db")
    else:
        with fresh_database(migrated=True) as url:
            yield url


@pytest.fixture
def empty_sqlite_url(tmp_path: Path) -> str:
    """A SQLite file that does not exist yet."""
    return f"sqlite:///{tmp_path / 'sounding.db'}"


@pytest.fixture
def empty_pg_url() -> Iterator[str]:
    with fresh_database() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """`db_url` with nothing in the database: no file yet, or an empty database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'sounding.db'}"
    else:
        with fresh_database() as url:
            yield url


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Start collectors for one test."""
    with collectors(tmp_path) as starter:
        yield starter


@pytest.fixture(scope="module",
                params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def module_db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[str]:
    """`db_url` for a module-scoped collector (tests/support/server.py `collectors`),
    for tests that store nothing that another test of the module reads."""
    if request.param == "sqlite":
        yield migrated_sqlite(tmp_path_factory.mktemp("module") / "sounding.db")
    else:
        with fresh_database(migrated=True) as url:
            yield url


@pytest.fixture(scope="module")
def module_projects(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
                    ) -> Iterator[Projects]:
    """One collector per module and store, handing each test a project of its own
    (tests/support/server.py `Projects`): for tests that read back what they stored,
    each in its own project's data."""
    with collectors(tmp_path_factory.mktemp("projects")) as start:
        yield Projects(start(module_db_url, keys=project_keys()))


@pytest.fixture(scope="module")
def sqlite_projects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Projects]:
    """`module_projects` on SQLite alone: for tests whose behaviour does not depend on
    the store (as `sqlite_server`), each reading what it stored in its own project."""
    with collectors(tmp_path_factory.mktemp("sqlite-projects")) as start:
        yield Projects(start(keys=project_keys()))


@pytest.fixture
def server(start: Callable[..., Server], db_url: str) -> Server:
    """One collector, on SQLite and again on PostgreSQL."""
    return start(db_url)


@pytest.fixture
def sqlite_server(start: Callable[..., Server], sqlite_url: str) -> Server:
    """One collector on SQLite, for tests whose behaviour does not depend on the store."""
    return start(sqlite_url)


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One SQLite collector for a whole module: for rules that store nothing."""
    with collectors(tmp_path_factory.mktemp("shared")) as start:
        yield start()
