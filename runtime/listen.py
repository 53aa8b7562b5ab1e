"""Binding a listening port, with an error an operator can act on: which port, why,
and the setting that moves it (model.errors.PortUnavailable)."""

from __future__ import annotations

import contextlib
import errno
import socket

from tornado.netutil import bind_sockets

from model.errors import PortUnavailable


def bind_tcp(host: str, port: int, setting: str, reuse_port: bool = False
             ) -> list[socket.socket]:
    """Tornado's bind_sockets (every address of `host`; "0.0.0.0" is IPv4 only),
    or PortUnavailable naming `setting`."""
    try:
        return bind_sockets(port, address=None if host in ("", "0.0.0.0") else host,
                            family=socket.AF_INET if host == "0.0.0.0" else socket.AF_UNSPEC,
                            reuse_port=reuse_port)
    except OSError as exc:
        raise PortUnavailable(port, setting, why(exc)) from exc


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
