"""JavaScript error.stack: V8 (Node) and Firefox formats, async, anonymous, native
and eval frames, Node's printed `[cause]`."""

from __future__ import annotations

from model.stacktrace import parse
from model.stacktrace.model import CAUSE

NODE = """TypeError: Cannot read properties of undefined (reading 'id')
    at getUser (/srv/app/users.js:14:23)
    at /srv/app/routes.js:8:5
    at Array.map (<anonymous>)
    at new Handler (file:///srv/app/handler.mjs:3:11)
    at Layer.handle (/srv/app/node_modules/express/lib/router/layer.js:95:5)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
    at async Promise.all (index 0)
    at async main (C:\\app\\main.js:2:1)"""


def test_v8_frames_innermost_last_after_reversal_with_columns() -> None:
    trace = parse(NODE)
    assert trace is not None and trace.language == "javascript"
    (exception,) = trace.exceptions
    assert (exception.type, exception.value) == (
        "TypeError", "Cannot read properties of undefined (reading 'id')")
    frames = exception.frames[::-1]  # as printed
    assert [(f.function, f.path, f.lineno, f.colno, f.in_app) for f in frames] == [
        ("getUser", "/srv/app/users.js", 14, 23, True),
        ("", "/srv/app/routes.js", 8, 5, True),
        ("Array.map", "<anonymous>", None, None, False),
        ("new Handler", "file:///srv/app/handler.mjs", 3, 11, True),
        ("Layer.handle", "/srv/app/node_modules/express/lib/router/layer.js", 95, 5, False),
        ("process.processTicksAndRejections", "node:internal/process/task_queues", 95, 5,
         False),
        ("Promise.all", "index 0", None, None, False),
        ("main", "C:\\app\\main.js", 2, 1, True)]


def test_firefox_frames_with_anonymous_functions() -> None:
    trace = parse("render@https://shop.example/app.js:10:7\n"
                  "@https://shop.example/app.js:20:3\n"
                  "handle/<@https://shop.example/vendor.js:1:900\n")
    assert trace is not None
    (exception,) = trace.exceptions
    assert [(f.function, f.lineno, f.colno) for f in exception.frames[::-1]] == [
        ("render", 10, 7), ("", 20, 3), ("handle/<", 1, 900)]


def test_a_printed_cause_is_the_root_of_the_chain() -> None:
    trace = parse("Error: checkout failed\n    at checkout (/app/a.js:1:1) {\n"
                  "  [cause]: Error: card declined\n      at charge (/app/b.js:2:2)\n}")
    assert trace is not None
    cause, raised = trace.exceptions
    assert (cause.value, cause.relation, cause.frames[0].function) == (
        "card declined", CAUSE, "charge")
    assert (raised.value, raised.relation, raised.frames[0].function) == (
        "checkout failed", None, "checkout")


def test_an_eval_frame_points_at_the_evaluated_code() -> None:
    trace = parse("Error: x\n    at eval (eval at run (/app/r.js:3:9), <anonymous>:1:7)")
    assert trace is not None
    (frame,) = trace.exceptions[0].frames
    assert (frame.path, frame.lineno, frame.colno) == ("<anonymous>", 1, 7)


def test_a_native_frame_and_a_bare_async_frame() -> None:
    trace = parse("RangeError: Invalid array length\n    at native\n"
                  "    at async /srv/app/jobs.js:4:9")
    assert trace is not None
    assert [(f.function, f.path, f.lineno, f.in_app)
            for f in trace.exceptions[0].frames[::-1]] == [
        ("", "native", None, False), ("", "/srv/app/jobs.js", 4, True)]
