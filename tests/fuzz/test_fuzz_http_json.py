"""Fuzzing Sounding's four JSON bodies (error, error batch, deploy, request metrics)
through their HTTP doors, against the real server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import strategies as s
from tests.fuzz.doors import (
    check_http,
    error_stored,
    expect,
    fuzz,
    post,
    request_stored,
)
from tests.fuzz.strategies import uniform
from tests.support.server import Server

JSON_DOORS = ["/ingest/errors", "/ingest/errors/batch", "/ingest/deploys", "/ingest/requests"]
ALL_DOORS = [*JSON_DOORS, "/ingest/v1/traces"]


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


def send(server: Server, session: requests.Session, path: str, body: Any
         ) -> tuple[int, bytes]:
    data = s.dumps(body)
    response = post(session, server.base + path, data, server.headers())
    return check_http(path, response, data), data


def must_keep(body: Any) -> bool:
    """Whether the decided rules oblige the door to keep the valid items of `body`:
    they may refuse the whole body only for NaN/Infinity or nesting past the limit."""
    return s.depth_of(body) <= s.BODY_MAX_DEPTH and not s.refusable(body)


@fuzz(40)
@given(mutated=s.mutations(s.valid_error()))
def test_error(fuzz_server: Server, session: requests.Session, mutated: s.Mutated) -> None:
    send(fuzz_server, session, "/ingest/errors", mutated.body)


@fuzz(40)
@given(mutated=s.mutations(s.valid_error()), first=st.booleans())
def test_error_batch_keeps_the_valid_items(fuzz_server: Server, session: requests.Session,
                                           mutated: s.Mutated, first: bool) -> None:
    sentinel = s.valid_error()
    items = [mutated.body, sentinel] if first else [sentinel, mutated.body]
    body = {"errors": items}
    status, data = send(fuzz_server, session, "/ingest/errors/batch", body)
    door = "/ingest/errors/batch"
    if must_keep(body):
        expect(status == 202, door, data, status, "a valid item beside an invalid one was "
                                                  "not accepted")
    if status == 202:
        expect(error_stored(fuzz_server, sentinel["fingerprint"]), door, data, status,
               "202, but the valid item is not stored")


@fuzz(25)
@given(mutated=s.mutations({"errors": [s.valid_error(), s.valid_error()]}))
def test_error_batch_envelope(fuzz_server: Server, session: requests.Session,
                              mutated: s.Mutated) -> None:
    send(fuzz_server, session, "/ingest/errors/batch", mutated.body)


@fuzz(30)
@given(mutated=s.mutations(s.valid_deploy()))
def test_deploy(fuzz_server: Server, session: requests.Session, mutated: s.Mutated) -> None:
    send(fuzz_server, session, "/ingest/deploys", mutated.body)


@fuzz(40)
@given(mutated=s.mutations(s.valid_request("/fuzz/mutated")), first=st.booleans())
def test_request_batch_keeps_the_valid_items(fuzz_server: Server, session: requests.Session,
                                             mutated: s.Mutated, first: bool) -> None:
    sentinel = s.valid_request()
    items = [mutated.body, sentinel] if first else [sentinel, mutated.body]
    body = {"requests": items}
    status, data = send(fuzz_server, session, "/ingest/requests", body)
    door = "/ingest/requests"
    if must_keep(body):
        expect(status == 202, door, data, status, "a valid item beside an invalid one was "
                                                  "not accepted")
    if status == 202:
        expect(request_stored(fuzz_server, sentinel["route"]), door, data, status,
               "202, but the valid item is not stored")


@pytest.mark.parametrize("path", JSON_DOORS)
@pytest.mark.parametrize("depth", [127, 129, 990, 1000, 10_000, 100_000])
def test_deep_bodies_are_400(fuzz_server: Server, session: requests.Session, path: str,
                             depth: int) -> None:
    """Any body nesting deeper than 128 levels is a 400 naming the problem, whole or
    inside a value (`params`, an item); 127 levels of a bare array is just not a record."""
    for kind in ("[", "{"):
        deep = s.nested_raw(depth, kind)
        for body in (deep, {"errors": [deep], "requests": [deep], "params": deep,
                            "git_sha": deep}):
            status, data = send(fuzz_server, session, path, body)
            expect(status == 400, path, data, status, f"nesting {depth} deep is not a 400")


@fuzz(50)
@given(path=st.sampled_from(ALL_DOORS), body=uniform(
    s.random_bodies(),
    st.sampled_from([s.valid_error(), s.valid_deploy(), {"requests": [s.valid_request()]},
                     {"errors": [s.valid_error()]}, s.json_traces(s.json_span())]).map(s.dumps)),
    key=st.sampled_from(["ok", "ok", "ok", "none", "wrong", "blank"]), data=st.data())
def test_random_bodies_and_headers(fuzz_server: Server, session: requests.Session, path: str,
                                   body: bytes, key: str, data: st.DataObject) -> None:
    headers, sent = data.draw(s.transports(body, "application/json"))
    if key == "ok":
        headers["Authorization"] = f"Bearer {fuzz_server.key}"
    elif key == "wrong":
        headers["Authorization"] = "Bearer snd_not-a-key"
    elif key == "blank":
        headers["Authorization"] = "Bearer "
    response = post(session, fuzz_server.base + path, sent, headers)
    status = check_http(path, response, sent)
    if key != "ok":
        expect(status in (0, 401), path, sent, status, "no valid key, but not a 401")
