"""A serve group's worker (sounding/group.py): `python -m sounding.worker FD`, started
and restarted by the leader through runtime/supervisor.py.

Its first message is its settings: the configuration, its place in the group and
the listening sockets the leader bound (inherited descriptors, by setting). It runs
the service as `sounding serve` would in one process, on those sockets, answers
`("ready",)` once it serves, and drains and exits on `("stop",)`, on SIGTERM, or
when the leader's end of the channel closes (the leader was killed). SIGINT is the
leader's to act on: a Ctrl-C in a terminal reaches every process of the group.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import sys
from typing import Any

from runtime import channel, eventloop, group, listen, logsetup, telemetry
from sounding import exitwatch
from sounding.service import Service

log = logging.getLogger("sounding")


async def _serve(sock: socket.socket, config: dict[str, Any]) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)

    def received(item: channel.Item) -> None:
        if item[0][0] == "stop":
            stop.set()

    leader = channel.Endpoint(sock, received, stop.set)
    service = Service(config)
    try:
        await service.start()
        leader.send(("ready",))
        await stop.wait()
    finally:
        await service.shutdown()
        leader.close()


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=int(argv[1]))
    settings = channel.receive_config(sock)
    if settings is None:
        return 0  # the leader stopped before it configured us
    logsetup.configure_from_env()  # as the leader logs (runtime/supervisor.py)
    group.join(group.Place(group.WORKER, settings["directory"], settings["index"],
                           settings["workers"]))
    listen.inherit(settings["fds"], settings["ports"])
    name, new_loop = eventloop.loop_factory(settings["config"]["service"]["event_loop"])
    telemetry.build_info(event_loop=name)
    try:
        with asyncio.Runner(loop_factory=new_loop) as runner:
            runner.run(_serve(sock, settings["config"]))
    except Exception:
        log.exception("serve worker %d failed", settings["index"])
        return 1
    exitwatch.arm()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
