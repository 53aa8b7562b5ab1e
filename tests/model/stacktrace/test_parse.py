"""Any text: a Trace or None, never an exception; text that is no trace is None."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.stacktrace import parse

# Pieces of every format, so that generated text mixes them often.
PIECES = st.sampled_from([
    "Traceback (most recent call last):", '  File "a.py", line 1, in f', "    at f (a.js:1:2)",
    "\tat a.B.c(B.java:3)", "Caused by: x.Y: z", "\t... 2 more", "goroutine 1 [running]:",
    "main.f()", "\ta.go:3 +0x1", "a.rb:1:in `f'", "   at A.B() in C:\\a.cs:line 1",
    " ---> E: m", "   --- End of inner exception stack trace ---", "f@a.js:1:1",
    "  [cause]: Error: c", "E: m", "", "The above exception was the direct cause of the "
    "following exception:"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(PIECES, st.text(max_size=40)), max_size=30))
def test_any_text_never_raises(lines: list[str]) -> None:
    trace = parse("\n".join(lines))
    assert trace is None or trace.frame_count > 0


@pytest.mark.parametrize("text", [
    "", "boom", "ValueError: boom", "connection refused at 10:42", "see http://x:80/y",
    "Traceback (most recent call last):\nValueError: boom"])
def test_text_without_frames_is_no_trace(text: str) -> None:
    assert parse(text) is None
