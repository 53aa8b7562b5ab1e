"""A channel to a helper process that another process runs: a serve group's worker
to the writer its leader owns (runtime/group.py, exporters/sql/exporter.py).

It stands where a runtime/supervisor.py Supervisor stands for the process that owns
the child, with the same contract: the helper answers a new connection `("ready",)`,
every later message goes to `on_item`, and when the connection goes (the helper
died; the leader's supervisor starts a new one) `on_exit` is called at once, so that
the owner answers what it had sent by its own rules, and the connection is made
again, backing off as the supervisor does. The socket's listening end is the
leader's and outlives every helper, so a connection made while a new helper starts
waits in its backlog instead of being refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable

from runtime import channel
from runtime.retry import Backoff
from runtime.supervisor import STABLE_AFTER, ChildFailed, keep_trying

log = logging.getLogger(__name__)


class Attachment:
    def __init__(self, name: str, path: str, *,
                 on_item: Callable[[channel.Item], None],
                 on_exit: Callable[[int | None], None],
                 backoff: Backoff | None = None, start_timeout: float = 60.0) -> None:
        self.name = name  # for logs: "the writer process"
        self.path = path
        self._on_item = on_item
        self._on_exit = on_exit
        self.backoff = backoff or Backoff()
        self.start_timeout = start_timeout
        self._endpoint: channel.Endpoint | None = None
        self._hello: asyncio.Future[None] | None = None
        self._ready = False
        self._up_since = 0.0
        self._again: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def ready(self) -> bool:
        return self._ready

    async def start(self) -> None:
        """Connect; ChildFailed if the helper does not answer."""
        if self._endpoint is not None or self._closing:
            return
        await self._connect()

    def send(self, message: channel.Message, payload: bytes | None = None) -> None:
        if self._endpoint is not None:
            self._endpoint.send(message, payload)

    async def shutdown(self, goodbye: channel.Message | None = None) -> None:
        """Let go. The helper is not ours to stop: `goodbye` is not sent."""
        del goodbye
        self._closing = True
        again, self._again = self._again, None
        if again is not None:
            again.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await again
        self._close()

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sock.setblocking(False)
        try:
            await asyncio.wait_for(loop.sock_connect(sock, self.path), self.start_timeout)
        except (OSError, TimeoutError) as exc:
            sock.close()
            raise ChildFailed(f"{self.name} cannot be reached at {self.path}: {exc}") from exc
        self._hello = loop.create_future()
        self._endpoint = channel.Endpoint(sock, self._received, self._closed)
        try:
            await asyncio.wait_for(asyncio.shield(self._hello), self.start_timeout)
        except BaseException as exc:
            self._close()
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise ChildFailed(f"{self.name} did not answer: {exc}") from exc

    def _received(self, item: channel.Item) -> None:
        if self._ready:
            self._on_item(item)
            return
        if item[0][0] == "ready" and self._hello is not None and not self._hello.done():
            self._ready = True
            self._up_since = asyncio.get_running_loop().time()
            self._hello.set_result(None)

    def _closed(self) -> None:
        was_ready = self._ready
        self._close()
        if self._hello is not None and not self._hello.done():
            self._hello.set_exception(ConnectionError("the connection closed"))
            self._hello.exception()  # retrieved here if nobody awaits it any more
        if not was_ready or self._closing:
            return
        self._on_exit(None)
        loop = asyncio.get_running_loop()
        if loop.time() - self._up_since >= STABLE_AFTER:
            self.backoff.reset()
        self._again = loop.create_task(self._reconnecting())

    async def _reconnecting(self) -> None:
        await keep_trying(self._connect, self.backoff, f"the connection to {self.name} closed",
                          "connecting", lambda: self._closing)

    def _close(self) -> None:
        self._ready = False
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is not None:
            endpoint.close()
