"""Which asyncio event loop the collector runs on (`service.event_loop`).

uvloop (libuv under asyncio's interface) runs Tornado's and grpc.aio's callbacks,
timers and socket calls with less interpreter work per turn: in the serve process
it cut the instructions per single-error request by 7-16% and per span of a
512-span OTLP request by 12% (callgrind, bench/RESULTS.md). `auto` takes it where
it is installed, the standard loop elsewhere (it does not build on Windows).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from model.errors import ConfigError

CHOICES = ("auto", "uvloop", "asyncio")


def loop_factory(choice: str) -> tuple[str, Callable[[], asyncio.AbstractEventLoop]]:
    """(the loop's name, a function making one) for a `service.event_loop` value."""
    if choice not in CHOICES:
        raise ConfigError(f"service.event_loop must be one of {', '.join(CHOICES)}, "
                          f"got {choice!r}")
    if choice != "asyncio":
        try:
            import uvloop
        except ImportError:
            if choice == "uvloop":
                raise ConfigError("service.event_loop is uvloop, but uvloop is not "
                                  "installed (pip install uvloop)") from None
        else:
            return "uvloop", uvloop.new_event_loop
    return "asyncio", asyncio.new_event_loop
