"""The receiving end of alert deliveries in tests: the recording listener of
tests/support/recorder.py at `/hook`, answering the statuses it is told to, in order
(200 once they run out), so a test can make it fail a few times, then accept."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.recorder import Recorded as Received
from tests.support.recorder import Recorder as AlertReceiver
from tests.support.recorder import free_port, recording

__all__ = ["AlertReceiver", "Received", "free_port", "receiving"]


@contextmanager
def receiving(port: int = 0, statuses: list[int] | None = None) -> Iterator[AlertReceiver]:
    with recording(answers=statuses or [], port=port, path="/hook") as receiver:
        yield receiver
