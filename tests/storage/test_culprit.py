"""storage/queries/culprit.py: the culprit of an occurrence (pure), and of the listed
groups' latest occurrences from a real store on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storage import keys
from storage.queries import culprit as cq
from storage.store import Store
from tests.storage.test_queries import NOW, Db, err


@pytest.fixture
def db(db_url: str) -> Iterator[Db]:
    store = Store(db_url)
    store.upgrade()
    with store.writer.begin() as conn:
        project = keys.ensure_project(conn, "culprit")
    yield Db(store, project)
    store.dispose()


def frame(path: str, function: str, in_app: bool | None = None) -> dict[str, object]:
    out: dict[str, object] = {"filename": path, "function": function}
    if in_app is not None:
        out["in_app"] = in_app
    return out


def test_the_innermost_in_app_frame_of_the_exception_raised_last() -> None:
    chain = [{"type": "KeyError", "frames": [frame("app/root.py", "cause", True)]},
             {"type": "ValueError", "frames": [  # stored outermost first
                 frame("app/views.py", "checkout", True), frame("app/billing.py", "total", True),
                 frame("lib/decimal.py", "divide", False)]}]
    assert cq.culprit_of(["ignored.py:1 in x"], chain) == "app/billing.py in total"
    unmarked = [{"frames": [frame("a.py", "outer"), frame("b.py", "inner")]}]
    assert cq.culprit_of(None, unmarked) == "b.py in inner"
    assert cq.culprit_of(None, [{"frames": [{"module": "app.jobs", "function": "run"}]}]) \
        == "app.jobs in run"


def test_a_backtrace_of_lines_names_its_first_file_and_function() -> None:
    assert cq.culprit_of(["app/billing.py:42 in total", "app/views.py:10 in checkout"],
                         None) == "app/billing.py in total"
    assert cq.culprit_of(["app/models/user.rb:12:in `save'"], None) == \
        "app/models/user.rb in save"
    assert cq.culprit_of(["app/x.py:3"], None) == "app/x.py"
    assert cq.culprit_of(["somewhere odd"], []) == "somewhere odd"
    assert cq.culprit_of([], None) is None and cq.culprit_of("text", {"no": 1}) is None
    assert cq.culprit_of([{"not": "a line"}], [{"frames": "nope"}]) is None


def test_the_listed_groups_culprits_come_from_their_latest_occurrences(db: Db) -> None:
    db.ingest(errors=[err("a", NOW - 50), err("b", NOW - 40)])
    newer = err("a", NOW - 10)
    newer.backtrace = ["app/new.py:7 in fresh"]
    older = err("a", NOW - 60)
    older.backtrace = ["app/old.py:7 in stale"]
    db.ingest(errors=[newer, older])
    assert cq.culprits(db.store, db.project, ["a", "b", "none"]) == {
        "a": "app/new.py in fresh", "b": "a.py in f"}
    assert cq.culprits(db.store, db.project, []) == {}
    assert cq.culprits(db.store, db.project + 1000, ["a"]) == {}


PYTHON_CHAIN = """Traceback (most recent call last):
  File "/srv/shop/app/tax/rates.py", line 41, in rate_for
    return RATES[region]
KeyError: 'EU-XX'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/srv/shop/app/views.py", line 57, in checkout
    total = pricing.total(cart)
  File "/srv/shop/app/tax/client.py", line 88, in compute
    rate = rates.rate_for(region)
  File "/usr/lib/python3.11/site-packages/cachetools/__init__.py", line 12, in wrapper
    return fn(*args)
app.tax.errors.TaxError: no rate for region EU-XX""".splitlines()

JAVA = """java.lang.IllegalStateException: cart is empty
\tat com.shop.Checkout.total(Checkout.java:42)
\tat com.shop.Api.post(Api.java:17)""".splitlines()


def test_a_stack_trace_as_the_language_prints_it_names_its_innermost_in_app_frame() -> None:
    # Not "Traceback (most recent call last):", the first line: the exception raised
    # last, its innermost frame that is not a library's (site-packages).
    assert cq.culprit_of(PYTHON_CHAIN, None) == "/srv/shop/app/tax/client.py in compute"
    assert cq.culprit_of(JAVA, None) == "Checkout.java in total"
