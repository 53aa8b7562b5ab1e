"""JVM traces as Throwable.printStackTrace() prints them (Java 9+ module names,
Kotlin files, `... N more`, suppressed exceptions, native frames)."""

from __future__ import annotations

from model.stacktrace import parse
from model.stacktrace.model import CAUSE

TRACE = """java.lang.IllegalStateException: order 17 failed
\tat com.acme.shop.OrderService.place(OrderService.java:88)
\tat com.acme.shop.OrderController.post(OrderController.kt:21)
\tat jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
\tat java.base/java.lang.Thread.run(Thread.java:833)
\tSuppressed: java.io.IOException: close failed
\t\tat com.acme.shop.Db.close(Db.java:5)
Caused by: java.sql.SQLException: connection refused
\tat org.postgresql.Driver.connect(Driver.java:300)
\tat com.acme.shop.Db.open(Db.java:12)
\tat com.acme.shop.OrderService.place(OrderService.java:80)
\t... 3 more
"""


def test_caused_by_is_the_root_cause_and_more_repeats_the_shared_frames() -> None:
    trace = parse(TRACE)
    assert trace is not None and trace.language == "java"
    cause, raised = trace.exceptions
    assert (cause.type, cause.value, cause.relation) == (
        "java.sql.SQLException", "connection refused", CAUSE)
    assert (raised.type, raised.value, raised.relation) == (
        "java.lang.IllegalStateException", "order 17 failed", None)
    # outermost first; the 3 shared frames are the raised exception's last 3
    assert [f.function for f in cause.frames] == [
        "run", "invoke0", "post", "place", "open", "connect"]


def test_frames_name_class_file_line_and_library_frames() -> None:
    trace = parse(TRACE)
    assert trace is not None
    raised = trace.exceptions[-1]
    assert [(f.module, f.function, f.path, f.lineno, f.in_app) for f in raised.frames] == [
        ("java.lang.Thread", "run", "Thread.java", 833, False),
        ("jdk.internal.reflect.NativeMethodAccessorImpl", "invoke0", "", None, False),
        ("com.acme.shop.OrderController", "post", "OrderController.kt", 21, True),
        ("com.acme.shop.OrderService", "place", "OrderService.java", 88, True)]
    # the suppressed exception's frame belongs to neither
    assert all(f.function != "close" for e in trace.exceptions for f in e.frames)


def test_a_kotlin_coroutine_and_lambda_frame() -> None:
    trace = parse("kotlin.NotImplementedError: An operation is not implemented.\n"
                  "\tat com.acme.MainKt$main$1.invokeSuspend(Main.kt:7)\n"
                  "\tat kotlin.coroutines.jvm.internal.BaseContinuationImpl.resumeWith("
                  "ContinuationImpl.kt:33)\n")
    assert trace is not None
    (exception,) = trace.exceptions
    assert [(f.module, f.function, f.in_app) for f in exception.frames] == [
        ("kotlin.coroutines.jvm.internal.BaseContinuationImpl", "resumeWith", False),
        ("com.acme.MainKt$main$1", "invokeSuspend", True)]
