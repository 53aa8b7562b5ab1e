"""The channel between the SQL exporter and its writer process.

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


def send(sock: socket.socket, message: Message) -> None:
    """One small message, blocking (the writer's answers)."""
    ((packet, _),) = pack([(message, None)])
    sock.send(packet)
