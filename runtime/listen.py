"""Binding a listening port, with an error an operator can act on: which port, why,
and the setting that moves it (model.errors.PortUnavailable).

In a serve group (runtime/group.py) the leader binds every port once and its workers
serve them: an HTTP port's listening sockets are inherited (one accept queue, so a
worker that dies loses no connection waiting in it, and port 0 is resolved once);
a gRPC port, which grpcio can only bind itself, is reserved by the leader with
SO_REUSEPORT (bound, never listening) and bound again by every worker with it.
Each is keyed by its setting (`receivers.http.port`), the name the components
already give here, so they bind as they always did and the hand-over stays here."""

from __future__ import annotations

import contextlib
import errno
import socket

from tornado.netutil import bind_sockets

from model.errors import PortUnavailable

# The leader's: what it bound, by setting (None outside a leader).
_bound: dict[str, list[socket.socket]] | None = None
_reserved: dict[str, socket.socket] = {}
# A worker's: what its leader handed over, by setting.
_handed_sockets: dict[str, list[socket.socket]] = {}
_handed_ports: dict[str, int] = {}


def bind_tcp(host: str, port: int, setting: str, reuse_port: bool = False
             ) -> list[socket.socket]:
    """Tornado's bind_sockets (every address of `host`; "0.0.0.0" is IPv4 only),
    or PortUnavailable naming `setting`. In a group's worker: the leader's sockets."""
    handed = _handed_sockets.pop(setting, None)
    if handed is not None:
        return handed
    try:
        sockets = bind_sockets(port, address=None if host in ("", "0.0.0.0") else host,
                               family=socket.AF_INET if host == "0.0.0.0" else socket.AF_UNSPEC,
                               reuse_port=reuse_port)
    except OSError as exc:
        raise PortUnavailable(port, setting, why(exc)) from exc
    if _bound is not None:
        _bound[setting] = sockets
    return sockets


def record() -> None:
    """The leader's: remember every socket bound from now on, for `handover`."""
    global _bound
    _bound = {}


def reserve(host: str, port: int, setting: str) -> int:
    """The leader's, for a port its workers bind themselves with SO_REUSEPORT (gRPC):
    bound and never listening, so it takes no connection, and held so that no other
    process can take the port while a worker restarts. Returns the port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host or "0.0.0.0", port))
    except OSError as exc:
        sock.close()
        raise PortUnavailable(port, setting, why(exc)) from exc
    _reserved[setting] = sock
    bound: int = sock.getsockname()[1]
    return bound


def handover() -> tuple[dict[str, list[int]], dict[str, int]]:
    """What the leader bound, for a worker: listening descriptors and reserved ports,
    by setting."""
    fds = {setting: [sock.fileno() for sock in sockets]
           for setting, sockets in (_bound or {}).items()}
    ports = {setting: sock.getsockname()[1] for setting, sock in _reserved.items()}
    return fds, ports


def inherit(fds: dict[str, list[int]], ports: dict[str, int]) -> None:
    """A worker's, before its components bind: what its leader handed over."""
    _handed_sockets.update({setting: [socket.socket(fileno=fd) for fd in numbers]
                            for setting, numbers in fds.items()})
    _handed_ports.update(ports)


def shared_port(setting: str) -> int | None:
    """The port the leader reserved under `setting`, to bind with SO_REUSEPORT."""
    return _handed_ports.get(setting)


def release() -> None:
    """The leader's, at the end: let go of the reserved ports."""
    global _bound
    for sock in _reserved.values():
        sock.close()
    _reserved.clear()
    _bound = None


def why(exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return "is in use"
    if exc.errno == errno.EACCES:
        return "needs privileges to bind"
    return f"cannot be bound: {exc.strerror or exc}"


def probe(host: str, port: int) -> str | None:
    """Why `host:port` cannot be bound, found by trying, or None if it can. grpcio
    says only that it failed, and writes its own line to stderr first: asked before
    binding, this keeps a busy port to one line. Racy by nature: a port taken in
    between is still refused by grpcio."""
    if port == 0:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with contextlib.closing(socket.socket(family, socket.SOCK_STREAM)) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host if host not in ("", "0.0.0.0") else "0.0.0.0", port))
        except OSError as exc:
            return why(exc)
    return None
