"""Sending fuzzed requests through the real doors and checking each answer.

The invariant per request: a 2xx, or a 4xx whose JSON body names the problem
(`error`, and on 400 `details` with `field`s); never a 5xx (nothing here overloads
the collector, so not even a 503); over gRPC never INTERNAL, UNKNOWN or
UNAVAILABLE, and INVALID_ARGUMENT names fields in a google.rpc.BadRequest.

With SOUNDING_FUZZ_LOG=<file>, a violation is appended to that file (one JSON line:
door, request, answer) instead of failing the test, so that one long run lists
every class of failure rather than stopping at the first.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import grpc
import requests
from google.rpc import error_details_pb2, status_pb2
from hypothesis import HealthCheck, Phase, settings

from tests.dashboard.data import ADMIN_TOKEN
from tests.support.server import Server

EXAMPLES = int(os.environ.get("SOUNDING_FUZZ_EXAMPLES", "0"))
LOG = os.environ.get("SOUNDING_FUZZ_LOG")
GRPC_FINE = {grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT,
             grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.RESOURCE_EXHAUSTED}


def fuzz(examples: int) -> settings:
    """Seeded and bounded; SOUNDING_FUZZ_EXAMPLES=5000 for a long run (which also
    shrinks what it finds to a minimal reproducer)."""
    phases = [Phase.explicit, Phase.generate]
    if EXAMPLES:
        phases.append(Phase.shrink)
    return settings(max_examples=EXAMPLES or examples, derandomize=True, deadline=None,
                    database=None, phases=phases, suppress_health_check=list(HealthCheck),
                    print_blob=False)


def _short(data: Any, limit: int = 600) -> str:
    text = data.decode("utf-8", "backslashreplace") if isinstance(data, bytes) else str(data)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def violation(door: str, sent: Any, answer: Any, why: str) -> None:
    if LOG:
        # Long enough to replay the request.
        with open(LOG, "a") as out:
            out.write(json.dumps({"door": door, "why": why, "sent": _short(sent, 200_000),
                                  "answer": _short(answer)}) + "\n")
        return
    raise AssertionError(f"{door}: {why}\n  sent: {_short(sent)}\n  answer: {_short(answer)}")


def expect(condition: bool, door: str, sent: Any, answer: Any, why: str) -> bool:
    if not condition:
        violation(door, sent, answer, why)
    return condition


# --- HTTP ----------------------------------------------------------------------------

def post(session: requests.Session, url: str, data: bytes, headers: dict[str, str]
         ) -> requests.Response | None:
    try:
        return session.post(url, data=data, headers=headers, timeout=30)
    except requests.ConnectionError:
        # A refusal answered before the whole body was read (413) may reset the
        # connection; the answer is then lost, which is a transport matter, not ours.
        return None


def check_http(door: str, response: requests.Response | None, sent: bytes) -> int:
    """Check one answer against the invariant; returns its status (0: no answer)."""
    if response is None:
        return 0
    status = response.status_code
    answer = f"{status} {response.text}"
    if not expect(status < 500, door, sent, answer, f"server error {status}"):
        return status
    if status < 400:
        return status
    try:
        body = json.loads(response.text, parse_constant=_refuse)
    except ValueError:
        violation(door, sent, answer, "a 4xx without a JSON body")
        return status
    if not expect(isinstance(body, dict) and isinstance(body.get("error"), str)
                  and body["error"], door, sent, answer, "a 4xx without an `error`"):
        return status
    if status == 400:
        details = body.get("details")
        expect(isinstance(details, list) and bool(details)
               and all(isinstance(d, dict) and isinstance(d.get("field"), str)
                       and isinstance(d.get("error"), str) for d in details),
               door, sent, answer, "a 400 whose `details` name no field")
    return status


def _refuse(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def strict_json(text: str) -> Any:
    """json.loads that refuses NaN and Infinity, as every other JSON parser does."""
    return json.loads(text, parse_constant=_refuse)


# --- gRPC ----------------------------------------------------------------------------

def call_raw(channel: grpc.Channel, method: str, body: bytes, key: str | None,
             gzip: bool = False) -> tuple[grpc.StatusCode, bytes | grpc.RpcError]:
    """Call `method` with `body` as the serialized request, as it is, however odd."""
    metadata = (("authorization", f"Bearer {key}"),) if key is not None else ()
    stub = channel.unary_unary(method)
    compression = grpc.Compression.Gzip if gzip else None
    try:
        return grpc.StatusCode.OK, stub(body, metadata=metadata, timeout=30,
                                        compression=compression)
    except grpc.RpcError as exc:
        return exc.code(), exc  # type: ignore[attr-defined]


def check_grpc(door: str, outcome: tuple[grpc.StatusCode, bytes | grpc.RpcError],
               sent: bytes) -> grpc.StatusCode:
    code, answer = outcome
    text = (f"{code.name}: {answer.details()}"  # type: ignore[union-attr]
            if isinstance(answer, grpc.RpcError) else f"OK {answer!r}")
    if not expect(code in GRPC_FINE, door, sent, text, f"status {code.name}"):
        return code
    if code == grpc.StatusCode.INVALID_ARGUMENT and isinstance(answer, grpc.RpcError):
        trailers = dict(answer.trailing_metadata() or ())  # type: ignore[attr-defined]
        raw = trailers.get("grpc-status-details-bin")
        fields: list[str] = []
        if isinstance(raw, bytes):
            for detail in status_pb2.Status.FromString(raw).details:
                bad = error_details_pb2.BadRequest()
                if detail.Unpack(bad):
                    fields += [v.field for v in bad.field_violations if v.field]
        expect(bool(fields), door, sent, text, "INVALID_ARGUMENT naming no field")
    return code


# --- the store -----------------------------------------------------------------------

def error_stored(server: Server, fingerprint: str) -> bool:
    return bool(server.query("SELECT 1 FROM error_events WHERE fingerprint = :f",
                             f=fingerprint))


def request_stored(server: Server, route: str) -> bool:
    return bool(server.query("SELECT 1 FROM request_rollups WHERE route = :r", r=route))


def trace_stored(server: Server, trace_id: str) -> bool:
    return bool(server.query("SELECT 1 FROM spans WHERE trace_id = :t",
                             t=bytes.fromhex(trace_id)))


def log_stored(server: Server, trace_id: str) -> bool:
    return bool(server.query("SELECT 1 FROM logs WHERE trace_id = :t",
                             t=bytes.fromhex(trace_id)))


# --- reading back --------------------------------------------------------------------

def logged_in(server: Server) -> requests.Session:
    """A browser's view: logged in with the admin token, holding the session cookie."""
    session = requests.Session()
    form = session.get(server.base + "/login", timeout=10).text
    xsrf = re.search(r'name="_xsrf" value="([^"]+)"', form)
    assert xsrf is not None, form
    login = session.post(server.base + "/login", timeout=10, allow_redirects=False,
                         data={"_xsrf": xsrf.group(1), "token": ADMIN_TOKEN, "next": "/"})
    assert login.status_code in (302, 303), login.text
    return session
