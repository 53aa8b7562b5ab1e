"""A tiny child for tests/runtime/test_supervisor.py, run as
`python -m tests.runtime.supervised_child FD` by runtime/supervisor.py.

Its configuration chooses how it starts: normally (answers "ready"), logging a
line with a traceback first ("log"), failing
("failed" with a reason), exiting at once, or saying nothing. Once ready it
echoes ("echo", x) with its pid, exits on ("exit", code), and on ("drain",)
answers ("bye",) a moment later and exits, as the writer process does."""

from __future__ import annotations

import logging
import os
import socket
import sys
import time

from runtime import channel, logsetup


def main(argv: list[str]) -> int:
    sock = socket.socket(fileno=int(argv[1]))
    received = channel.receive(sock)
    if not received:
        return 0
    ((_, config), _), *_rest = received
    if config.get("log"):
        # Logs as the collector that started it: tests/runtime/test_logsetup.py.
        logsetup.configure_from_env()
        try:
            raise ValueError("a failure in the child")
        except ValueError:
            logging.getLogger("child").exception("child says %s", config["log"])
    if config.get("fail"):
        channel.send(sock, ("failed", config["fail"]))
        return 1
    if config.get("exit_at_once"):
        return 3
    if config.get("silent"):
        time.sleep(60)
        return 0
    channel.send(sock, ("ready",))
    while True:
        try:
            items = channel.receive(sock)
        except OSError:
            items = None
        if items is None:
            return 0
        for message, payload in items:
            if message[0] == "echo":
                channel.send(sock, ("echo", os.getpid(), message[1]), payload)
            elif message[0] == "exit":
                return int(message[1])
            elif message[0] == "drain":
                time.sleep(0.3)
                channel.send(sock, ("bye",))
                return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
