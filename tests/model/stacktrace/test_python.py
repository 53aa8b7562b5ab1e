"""Python tracebacks as traceback.print_exc() prints them (3.11+: carets)."""

from __future__ import annotations

from model.stacktrace import parse
from model.stacktrace.model import CAUSE, CONTEXT

CHAINED = '''Traceback (most recent call last):
  File "/srv/app/billing.py", line 42, in total
    return subtotal / count
           ~~~~~~~~~^~~~~~~
ZeroDivisionError: division by zero

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/srv/app/views.py", line 10, in checkout
    total(items, 0)
  File "/usr/lib/python3.11/contextlib.py", line 81, in inner
    return func(*args, **kwds)
  File "/srv/app/billing.py", line 44, in total
    raise BillingError("cannot total") from exc
app.billing.BillingError: cannot total

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "C:\\Users\\me\\venv\\Lib\\site-packages\\flask\\app.py", line 1, in wsgi_app
  File "<frozen runpy>", line 198, in _run_module_as_main
KeyError: 'user'
'''


def test_a_chain_root_cause_first_with_how_each_led_to_the_next() -> None:
    trace = parse(CHAINED)
    assert trace is not None and trace.language == "python"
    first, second, third = trace.exceptions
    assert (first.type, first.value, first.relation) == ("ZeroDivisionError",
                                                         "division by zero", CAUSE)
    assert (second.type, second.value, second.relation) == ("app.billing.BillingError",
                                                            "cannot total", CONTEXT)
    assert (third.type, third.value, third.relation) == ("KeyError", "'user'", None)


def test_frames_outermost_first_with_code_line_and_library_frames_marked() -> None:
    trace = parse(CHAINED)
    assert trace is not None
    first, second, third = trace.exceptions
    (only,) = first.frames
    assert (only.path, only.function, only.lineno, only.source) == (
        "/srv/app/billing.py", "total", 42, "return subtotal / count")
    assert [(f.function, f.in_app) for f in second.frames] == [
        ("checkout", True), ("inner", False), ("total", True)]
    # Windows site-packages and frozen modules: library frames; no code line printed
    assert [(f.path.split("\\")[-1], f.in_app, f.source) for f in third.frames] == [
        ("app.py", False, ""), ("<frozen runpy>", False, "")]


def test_a_multi_line_message_and_a_recursion_elision() -> None:
    text = ('Traceback (most recent call last):\n  File "a.py", line 2, in f\n    f()\n'
            '  [Previous line repeated 996 more times]\n'
            'RecursionError: maximum recursion depth exceeded\nsecond line\n')
    trace = parse(text)
    assert trace is not None
    (exception,) = trace.exceptions
    assert exception.type == "RecursionError"
    assert exception.value == "maximum recursion depth exceeded\nsecond line"
    assert len(exception.frames) == 1


def test_an_exception_without_a_message_and_a_module_level_frame() -> None:
    trace = parse('Traceback (most recent call last):\n  File "<stdin>", line 1, in '
                  '<module>\nStopIteration\n')
    assert trace is not None
    (exception,) = trace.exceptions
    assert (exception.type, exception.value) == ("StopIteration", "")
    assert exception.frames[0].function == "<module>"


GROUP = '''  + Exception Group Traceback (most recent call last):
  |   File "/srv/app/jobs.py", line 20, in run_all
  |     async with asyncio.TaskGroup() as group:
  | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/srv/app/jobs.py", line 9, in fetch
    |     raise ConnectionError("feed down")
    | ConnectionError: feed down
    +---------------- 2 ----------------
    | Traceback (most recent call last):
    |   File "/srv/app/jobs.py", line 12, in parse
    | ValueError: bad row 3
    +------------------------------------
'''


def test_an_exception_group_gives_the_group_and_each_member() -> None:
    trace = parse(GROUP)
    assert trace is not None
    assert [(e.type, e.value, [(f.function, f.lineno) for f in e.frames])
            for e in trace.exceptions] == [
        ("ExceptionGroup", "unhandled errors in a TaskGroup (2 sub-exceptions)",
         [("run_all", 20)]),
        ("ConnectionError", "feed down", [("fetch", 9)]),
        ("ValueError", "bad row 3", [("parse", 12)])]
    assert trace.exceptions[0].frames[0].source == "async with asyncio.TaskGroup() as group:"
