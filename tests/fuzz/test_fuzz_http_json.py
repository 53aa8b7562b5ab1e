"""Fuzzing Sounding's four JSON bodies (error, error batch, deploy, request metrics)
through their HTTP doors, against the real server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from tests.dashboard.data import ADMIN_TOKEN
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


SEGMENTS = ["%00", "%ff", "%ed%a0%80", "..", "%2e%2e", "%2F", "x" * 3000, "9" * 30,
            str(2**63), "-1", "1e400", "%0d%0a", "%09", "acme", "errors", "1", "v1"]
PREFIXES = ["/", "/ingest/", "/ingest/errors/", "/static/", "/api/v1/projects/",
            "/api/v1/projects/acme/error-groups/", "/api/v1/projects/acme/traces/",
            "/projects/acme/errors/", "/projects/acme/traces/", "/login?next=", "/health/"]


def request_path(server: Server, session: requests.Session, method: str, path: str,
                 admin: bool) -> None:
    """One request to any path: never a server error; under /ingest a 4xx names the
    problem in JSON."""
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN if admin else server.key}"}
    try:
        response = session.request(method, server.base + path, headers=headers, timeout=30,
                                   allow_redirects=False)
    except requests.ConnectionError:
        return
    door = f"{method} {path[:200]}"
    if path.startswith("/ingest/") and method not in ("HEAD", "OPTIONS"):
        check_http(door, response, b"")
    else:
        expect(response.status_code < 500, door, b"", f"{response.status_code} "
               f"{response.text[:300]}", f"server error {response.status_code}")


def test_every_prefix_with_every_odd_segment(fuzz_server: Server,
                                             session: requests.Session) -> None:
    for prefix in PREFIXES:
        for segment in SEGMENTS:
            request_path(fuzz_server, session, "GET", prefix + segment, admin=True)


@fuzz(60)
@given(method=st.sampled_from(["GET", "GET", "GET", "POST", "PUT", "DELETE", "OPTIONS", "HEAD"]),
       prefix=st.sampled_from(PREFIXES), segments=st.lists(s.weighted(
           (3, st.sampled_from(SEGMENTS)), (1, s.odd_text().map(
               lambda t: quote(t, safe="", errors="surrogatepass")))), min_size=1, max_size=2),
       admin=st.booleans())
def test_random_paths_and_methods(fuzz_server: Server, session: requests.Session, method: str,
                                  prefix: str, segments: list[str], admin: bool) -> None:
    request_path(fuzz_server, session, method, prefix + "/".join(segments), admin)
