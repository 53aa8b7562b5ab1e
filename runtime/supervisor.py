"""One child process kept running: the SQL writer (exporters/sql/writer.py) and each
decode worker (runtime/offload.py) are run by this one mechanism.

The child is `python -m <module> <fd>`, talking over runtime/channel.py. Its first
message is `("config", config())`; it answers `("ready",)` or `("failed", why)`.
From then on every message it sends goes to `on_item`. The owner may send as soon
as the channel is `open`, before the child is `ready` (the messages wait in the
socket). When a child goes away after the first one started (it exited, crashed,
was killed, or a new one failed to start) and the supervisor is not shutting down,
`on_exit` is called at once, so that the owner answers what it had sent by its
own rules, and a new child is started.

Restarts back off exponentially with full jitter: the first comes within 0.1 s
(a killed writer costs clients a fraction of a second of 503s), each quick death
after it doubles the ceiling up to 30 s, so that a child that dies at once (a
store that crashes the driver, a plugin that breaks at import) does not take a
core in a fork loop; the delay is drawn uniformly below the ceiling so that
several workers dying together do not come back in lockstep. A child that stayed
up `stable_after` seconds was not crash-looping: the next restart is quick again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from runtime import channel, logsetup
from runtime.retry import Backoff

log = logging.getLogger(__name__)

STABLE_AFTER = 10.0  # a child up this long resets the backoff


class ChildFailed(RuntimeError):
    """The child did not start: it exited, said why, or did not answer in time."""


async def keep_trying(attempt: Callable[[], Awaitable[None]], backoff: Backoff, why: str,
                      doing: str, stopped: Callable[[], bool]) -> None:
    """`attempt` again after each of `backoff`'s delays until it succeeds or `stopped()`:
    a child started again here, a serve worker's connection to the group's writer in
    runtime/attach.py. Each wait is logged with why (the last ChildFailed's reason);
    the owner answers 503 meanwhile."""
    while not stopped():
        delay = backoff.next()
        log.warning("%s; %s again in %.2f s", why, doing, delay)
        await asyncio.sleep(delay)
        try:
            await attempt()
            return
        except ChildFailed as exc:
            why = str(exc)


class Supervisor:
    def __init__(self, name: str, module: str, config: Callable[[], Any], *,
                 on_item: Callable[[channel.Item], None],
                 on_exit: Callable[[int | None], None],
                 backoff: Backoff | None = None, start_timeout: float = 60.0,
                 stop_timeout: float = 30.0, stable_after: float = STABLE_AFTER,
                 pass_fds: tuple[int, ...] = ()) -> None:
        self.name = name  # for logs: "the writer process", "decode worker 0"
        self.module = module
        self._config = config  # asked again for every child started
        self._on_item = on_item
        self._on_exit = on_exit
        self.backoff = backoff or Backoff()
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.stable_after = stable_after
        # Descriptors every child inherits beside its channel (a group's worker gets
        # the listening sockets, the writer the socket its workers connect to).
        self.pass_fds = pass_fds
        self._proc: subprocess.Popen[bytes] | None = None
        self._endpoint: channel.Endpoint | None = None
        self._hello: asyncio.Future[None] | None = None  # per child: its ready or failed
        self._gone: asyncio.Future[None] | None = None  # per child: its end closed
        self._ready = False
        self._up_since = 0.0
        self._running = False  # the first child started: later failures are restarts
        self._restart: asyncio.Task[None] | None = None
        self._started = False
        self._closing = False

    @property
    def ready(self) -> bool:
        """A child is running and has answered its configuration."""
        return self._ready

    @property
    def open(self) -> bool:
        """A child is starting or ready: what is sent now reaches it, or `on_exit` is
        called for it."""
        return self._endpoint is not None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    async def start(self) -> None:
        """Start the first child; ChildFailed if it does not start (a configuration
        error is then reported at start-up, not retried forever)."""
        if self._started or self._closing:
            return
        self._started = True
        await self._spawn()
        self._running = True

    def send(self, message: channel.Message, payload: bytes | None = None) -> None:
        if self._endpoint is not None:
            self._endpoint.send(message, payload)

    def kill(self) -> None:
        """SIGKILL the child now (it is stuck); its end closing then reports it gone."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()

    async def shutdown(self, goodbye: channel.Message | None = None) -> None:
        """Stop for good. With `goodbye`, send it and wait (up to `stop_timeout`) for
        the child to close its end (the writer commits what it holds first); then
        close ours, which a child takes as its signal to exit, and reap it. Safe
        before `start` and twice."""
        self._closing = True
        restart, self._restart = self._restart, None
        if restart is not None:
            restart.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await restart
        if goodbye is not None and self._ready and self._gone is not None:
            self.send(goodbye)
            try:
                await asyncio.wait_for(asyncio.shield(self._gone), self.stop_timeout)
            except TimeoutError:
                log.error("%s did not finish within %.0f s", self.name, self.stop_timeout)
        self._close()
        await self._reap()

    # The child.

    async def _spawn(self) -> None:
        parent, child = channel.pair()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", self.module, str(child.fileno())],
                pass_fds=(child.fileno(), *self.pass_fds), stdin=subprocess.DEVNULL,
                # The child logs as this process does (level, text or JSON, throttle).
                env={**os.environ, **logsetup.child_env()})
        except BaseException:
            parent.close()
            raise
        finally:
            child.close()
        loop = asyncio.get_running_loop()
        self._hello = loop.create_future()
        self._gone = loop.create_future()
        self._endpoint = channel.Endpoint(parent, self._received, self._closed)
        try:
            self.send(("config", self._config()))
            await asyncio.wait_for(asyncio.shield(self._hello), self.start_timeout)
        except asyncio.CancelledError:
            self._close()  # shutdown() reaps it
            raise
        except BaseException as exc:
            self._close()
            if isinstance(exc, TimeoutError):
                self.kill()
                exc = TimeoutError(f"no answer within {self.start_timeout:.0f} s")
            restarting = self._running and not self._closing
            code = await self._reap()
            if restarting:
                self._on_exit(code)  # what was sent to it while it started
            raise ChildFailed(f"{self.name} did not start: {exc} (exit code {code})") \
                from exc

    def _received(self, item: channel.Item) -> None:
        if self._ready:
            self._on_item(item)
            return
        message, _ = item
        if self._hello is None or self._hello.done():
            return
        if message[0] == "ready":
            self._ready = True
            self._up_since = asyncio.get_running_loop().time()
            self._hello.set_result(None)
        elif message[0] == "failed":
            self._hello.set_exception(ConnectionError(message[1]))
            self._hello.exception()  # retrieved here if nobody awaits it any more

    def _closed(self) -> None:
        """The child's end closed: it exited, or is about to."""
        was_ready = self._ready
        self._close()
        if self._hello is not None and not self._hello.done():
            self._hello.set_exception(ConnectionError("it exited"))
            self._hello.exception()  # retrieved here if nobody awaits it any more
        if self._gone is not None and not self._gone.done():
            self._gone.set_result(None)
        if not was_ready or self._closing:
            return  # never started: _spawn reports it
        self._on_exit(self._proc.poll() if self._proc is not None else None)
        loop = asyncio.get_running_loop()
        if loop.time() - self._up_since >= self.stable_after:
            self.backoff.reset()
        self._restart = loop.create_task(self._restarting())

    async def _restarting(self) -> None:
        code = await self._reap()
        await keep_trying(self._spawn, self.backoff, f"{self.name} exited with code {code}",
                          "starting it", lambda: self._closing)

    def _close(self) -> None:
        self._ready = False
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is not None:
            endpoint.close()

    async def _reap(self) -> int | None:
        proc = self._proc
        if proc is None:
            return None
        try:
            code = await asyncio.wait_for(asyncio.to_thread(proc.wait), self.stop_timeout)
        except TimeoutError:
            log.error("%s did not stop within %.0f s; killing it", self.name,
                      self.stop_timeout)
            proc.kill()
            code = await asyncio.to_thread(proc.wait)
        if self._proc is proc:
            self._proc = None
        return code
