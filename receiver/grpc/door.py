"""The gRPC door of every signal: one method per signal of receiver/signals/table.py,
grouped into the services the .proto files name. receiver/grpc/call.py does what
every call needs (auth, shedding, status mapping); this adds only the framing:
the message into the signal's document, and the signal's Outcome into the reply."""

from __future__ import annotations

import grpc

from model.component import Authenticator
from receiver.grpc.call import Call, Method, service
from receiver.signals.outcome import Origin
from receiver.signals.table import SIGNALS, Signal
from runtime.pipeline import Pipeline


def signal_method(signal: Signal) -> Method:
    door = signal.grpc

    async def method(call: Call) -> bytes:
        document = door.document(call.body)
        outcome = await signal.handle(call.pipeline,
                                      Origin(call.project_id, len(call.body), call.trace_link(),
                                             call.client_ip()),
                                      document)
        return door.reply(outcome)

    return method


def signal_services(pipeline: Pipeline, auth: Authenticator) -> list[grpc.GenericRpcHandler]:
    services: dict[str, dict[str, tuple[str, Method, tuple[str, ...]]]] = {}
    for signal in SIGNALS:
        services.setdefault(signal.grpc.service, {})[signal.grpc.method] = (
            f"grpc_{signal.name}", signal_method(signal), signal.categories)
    return [service(name, methods, pipeline, auth) for name, methods in services.items()]
