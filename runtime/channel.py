"""A channel between the event loop and a helper process: the SQL exporter and its
writer process (exporters/sql/writer.py), the decode pool and its workers
(runtime/offload.py).

A Unix SOCK_SEQPACKET socket pair: every packet is one pickled list of messages,
so there is no framing to parse, and the exporter puts every message of one
event-loop turn in one packet (one system call for many requests under load).
A large payload (a batch of spans is a few hundred KiB) does not travel through
the socket: it is written to an anonymous in-memory file whose descriptor rides
along with the packet (SCM_RIGHTS). Socket buffers are small by default (about
200 KiB on Linux); a payload bigger than that would otherwise cross only as fast
as the collector's busy event loop comes back to push the next piece, which kept
the writer waiting half the time.
"""

from __future__ import annotations

import os
import pickle
import socket
import tempfile
from collections import deque
from collections.abc import Callable
from typing import Any

INLINE_MAX = 32 * 1024  # payloads up to this size ride inside the packet
PACKET_BUDGET = 96 * 1024  # a packet is cut once its inline payloads pass this
PACKET_MAX = 160 * 1024  # the largest packet either side sends (below the socket buffer)
MAX_FDS = 64  # descriptors per packet (the kernel allows 253)

Message = tuple[Any, ...]
Item = tuple[Message, bytes | None]  # a message and its payload


def pair() -> tuple[socket.socket, socket.socket]:
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)


def pack(items: list[Item]) -> list[tuple[bytes, list[int]]]:
    """Packets for `items`, in order: (packet, descriptors to send with it). The
    caller closes the descriptors once the packet is sent."""
    packets: list[tuple[bytes, list[int]]] = []
    entries: list[tuple[Message, bytes | None, int]] = []
    fds: list[int] = []
    inline = 0
    for message, payload in items:
        if payload is not None and len(payload) > INLINE_MAX:
            fds.append(_payload_file(payload))
            entries.append((message, None, len(fds) - 1))
        else:
            entries.append((message, payload, -1))
            inline += len(payload) if payload is not None else 0
        if inline > PACKET_BUDGET or len(fds) >= MAX_FDS:
            packets.append((pickle.dumps(entries, protocol=pickle.HIGHEST_PROTOCOL), fds))
            entries, fds, inline = [], [], 0
    if entries:
        packets.append((pickle.dumps(entries, protocol=pickle.HIGHEST_PROTOCOL), fds))
    return packets


def _payload_file(payload: bytes) -> int:
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("sounding-batch", os.MFD_CLOEXEC)
    else:  # not Linux: an unlinked temporary file does the same
        handle = tempfile.TemporaryFile()
        fd = os.dup(handle.fileno())
        handle.close()
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]
    return fd


def _read_file(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    parts, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def unpack(packet: bytes, fds: list[int]) -> list[Item]:
    """The messages of a received packet with their payloads; closes the descriptors."""
    try:
        entries = pickle.loads(packet)
        return [(message, _read_file(fds[index]) if index >= 0 else payload)
                for message, payload, index in entries]
    finally:
        for fd in fds:
            os.close(fd)


def receive(sock: socket.socket) -> list[Item] | None:
    """The next packet's messages, or None when the other side has closed (blocking)."""
    packet, fds, _flags, _address = socket.recv_fds(sock, PACKET_MAX, MAX_FDS)
    if not packet:
        for fd in fds:
            os.close(fd)
        return None
    return unpack(packet, fds)


def receive_config(sock: socket.socket) -> Any:
    """A supervised child's configuration, the first message its parent sends
    (runtime/supervisor.py: `("config", config)`); None when the parent closed before
    sending it (it stopped while the child was starting)."""
    try:
        received = receive(sock)
    except OSError:
        received = None
    if not received:
        return None
    ((_, config), _), *_rest = received
    return config


def send(sock: socket.socket, message: Message, payload: bytes | None = None) -> None:
    """One message, blocking (the helper process's side)."""
    for packet, fds in pack([(message, payload)]):
        try:
            if fds:
                socket.send_fds(sock, [packet], fds)
            else:
                sock.send(packet)
        finally:
            for fd in fds:
                os.close(fd)


class Endpoint:
    """The event loop's side of a channel, non-blocking: everything sent in one turn of
    the loop goes out together, in as few packets as possible; `on_item` is called for
    every item received, and `on_closed` once, when the other side is gone."""

    def __init__(self, sock: socket.socket, on_item: Callable[[Item], None],
                 on_closed: Callable[[], None]) -> None:
        self.sock: socket.socket | None = sock
        self._on_item = on_item
        self._on_closed = on_closed
        self._unsent: list[Item] = []  # queued in this turn of the event loop
        self._flush_scheduled = False
        self._outbox: deque[tuple[bytes, list[int]]] = deque()  # packed, not yet sent
        self._waiting_to_write = False
        # Here, not at the top: only the parent's end runs on an event loop, and the
        # writer process, which never does, is 9 MB lighter without asyncio (and ssl).
        import asyncio

        self._loop = asyncio.get_running_loop()
        sock.setblocking(False)
        self._loop.add_reader(sock.fileno(), self._on_readable)

    @property
    def open(self) -> bool:
        return self.sock is not None

    def send(self, message: Message, payload: bytes | None = None) -> None:
        self._unsent.append((message, payload))
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._unsent:
            self._outbox.extend(pack(self._unsent))
            self._unsent = []
        sock = self.sock
        while self._outbox and sock is not None:
            packet, fds = self._outbox[0]
            try:
                if fds:
                    socket.send_fds(sock, [packet], fds)
                else:
                    sock.send(packet)
            except BlockingIOError:
                if not self._waiting_to_write:
                    self._loop.add_writer(sock.fileno(), self._flush)
                    self._waiting_to_write = True
                return
            except OSError:
                return  # the other side is gone; the reader side notices
            self._outbox.popleft()
            for fd in fds:
                os.close(fd)
        if self._waiting_to_write and sock is not None:
            self._loop.remove_writer(sock.fileno())
            self._waiting_to_write = False

    def _on_readable(self) -> None:
        while self.sock is not None:
            try:
                packet, fds, _flags, _address = socket.recv_fds(self.sock, PACKET_MAX, MAX_FDS)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                packet, fds = b"", []
            if not packet:
                for fd in fds:
                    os.close(fd)
                self.close()
                self._on_closed()
                return
            for item in unpack(packet, fds):
                self._on_item(item)
                if self.sock is None:
                    return  # on_item closed the channel

    def close(self) -> None:
        sock, self.sock = self.sock, None
        if sock is None:
            return
        self._loop.remove_reader(sock.fileno())
        if self._waiting_to_write:
            self._loop.remove_writer(sock.fileno())
            self._waiting_to_write = False
        sock.close()
        for _, fds in self._outbox:
            for fd in fds:
                os.close(fd)
        self._outbox.clear()
        self._unsent = []
