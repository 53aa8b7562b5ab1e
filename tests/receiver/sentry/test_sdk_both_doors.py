"""One Python exception reported by the real sentry-sdk (the Sentry door) and by the
real OpenTelemetry Python SDK (a span event through /ingest/v1/traces) lands in one
group on the real server, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.receiver.sentry.e2e import send, start_with_api, wait_for
from tests.receiver.sentry.helpers import KEY
from tests.support import clients
from tests.support.server import Server, collectors

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2, clients.SENTRY_JAVASCRIPT)


@pytest.fixture(scope="module")
def both_sent(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[Server]:
    """sdk_scenarios.py's `both_doors`: two exceptions, each through both doors; sent
    once per store for the module's tests, which only read what it stored."""
    with collectors(tmp_path_factory.mktemp("both-doors")) as start:
        server = start_with_api(start, module_db_url)
        try:
            _sent(server)
        except BaseException:
            server.stop()  # `collectors` stops its collectors only after a clean yield
            raise
        yield server


def _sent(server: Server) -> Server:
    send(server, "both_doors", env={
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": server.base + "/ingest/v1/traces",
        "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer {KEY}"})
    # Each SDK's export was answered once stored; poll all the same, so that a test
    # never reads between the two.
    wait_for(lambda: server.query("SELECT count(*) FROM error_events")[0][0] == 4,
             "both copies of both exceptions stored")
    return server


def groups_of(server: Server, exception_class: str) -> list[tuple[str, int]]:
    """(fingerprint, count) of the groups whose stored errors have this short type."""
    return sorted(server.query(
        "SELECT fingerprint, count(*) FROM error_events WHERE exception_class IN "
        "(:short, :long) GROUP BY fingerprint", short=exception_class,
        long=f"json.decoder.{exception_class}"))


def test_an_exception_raised_in_the_app_from_both_sdks_is_one_group(
        both_sent: Server) -> None:
    [(fingerprint, count)] = groups_of(both_sent, "ValueError")
    assert count == 2
    assert both_sent.query("SELECT exception_class, message, count FROM error_groups "
                           "WHERE fingerprint = :f", f=fingerprint) == \
        [("ValueError", "card of order 42 declined", 2)]
    # One copy through each door: the span event's has the text traceback.
    backtraces = [b for (b,) in both_sent.query(
        "SELECT backtrace FROM error_events WHERE fingerprint = :f", f=fingerprint)]
    assert sum("Traceback (most recent call last)" in str(b) for b in backtraces) == 1


def test_an_exception_raised_in_the_standard_library_from_both_sdks_is_one_group(
        both_sent: Server) -> None:
    assert [count for _fp, count in groups_of(both_sent, "JSONDecodeError")] == [2]
