"""The Sentry door on the real collector: envelopes and auth, over SQLite and
PostgreSQL. Items whose decoding is another module's (event, transaction) are
tested in test_sdk.py; here the envelopes carry the types the door only counts."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
import requests

from tests.receiver.sentry.envelopes import envelope, item
from tests.receiver.sentry.helpers import (
    KEY,
    OTHER_KEY,
    auth_header,
    dsn,
    post_envelope,
    project_id,
    sentry_items,
    start_sentry,
)
from tests.support.server import Server, collectors

EVENT_ID = "9ec79c33ec9942ab8353589fcb2e04dc"
SESSION = {"sid": "7c7b6585-7f48-4a2c-9b3a-8d3f5e4b8e6f", "status": "ok", "errors": 0,
           "started": "2024-05-01T10:00:00Z", "attrs": {"release": "shop@1.0"}}
CLIENT_REPORT = {"timestamp": 1714557600, "discarded_events": [
    {"reason": "queue_overflow", "category": "error", "quantity": 1}]}


def _ignored_only(**headers: object) -> bytes:
    return envelope({"event_id": EVENT_ID, **headers}, [
        item("session", SESSION), item("client_report", CLIENT_REPORT),
        item("attachment", b"\x00binary\nbytes", filename="a.bin"),
        item("replay_recording", b"{}\n[]"), item("a_type_from_the_future", {"x": 1})])


@pytest.fixture(scope="module")
def sentry(module_db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One collector per store for the module: its tests are refused or only counted,
    and none reads what another sent, except the first test below (its own collector)."""
    with collectors(tmp_path_factory.mktemp("door")) as start:
        yield start_sentry(start, module_db_url)


def test_ignored_item_types_are_acknowledged_with_the_event_id_and_counted(
        start: Callable[..., Server], db_url: str) -> None:
    sentry = start_sentry(start, db_url)  # it reads the counters: nobody else's items
    response = post_envelope(sentry, _ignored_only())
    assert response.status_code == 200, response.text
    assert response.json() == {"id": EVENT_ID}
    assert sentry_items(sentry) == {"session": 1, "client_report": 1, "attachment": 1,
                                    "replay_recording": 1, "unknown": 1}
    assert sentry.query("SELECT count(*) FROM error_events")[0][0] == 0


def test_an_envelope_without_an_event_id_gets_one(sentry: Server) -> None:
    body = envelope({}, [item("session", SESSION)], lengths=False)
    response = post_envelope(sentry, body)
    assert response.status_code == 200, response.text
    assert len(response.json()["id"]) == 32
    assert response.json()["id"] != post_envelope(sentry, body).json()["id"]


@pytest.mark.parametrize("where", ["x-sentry-auth", "authorization", "query", "dsn"])
def test_the_key_is_read_from_each_place_sdks_put_it(sentry: Server, where: str) -> None:
    headers: dict[str, str] = {}
    params: dict[str, str] = {}
    extra: dict[str, str] = {}
    if where == "x-sentry-auth":
        headers = auth_header()
    elif where == "authorization":
        headers = {"Authorization": auth_header()["X-Sentry-Auth"]}
    elif where == "query":
        params = {"sentry_key": KEY, "sentry_version": "7"}
    else:
        extra = {"dsn": dsn(sentry)}
    response = post_envelope(sentry, _ignored_only(**extra), key=None, headers=headers,
                             params=params)
    assert response.status_code == 200, response.text


def test_a_missing_key_is_401(sentry: Server) -> None:
    response = post_envelope(sentry, _ignored_only(), key=None)
    assert response.status_code == 401
    assert "sentry_key" in response.json()["detail"]
    response = post_envelope(sentry, b'{"message": "hi"}', key=None, path="store")
    assert response.status_code == 401


@pytest.mark.parametrize("key", ["00000000000000000000000000000000", "x" * 600])
def test_an_unknown_key_is_401_and_never_echoed(sentry: Server, key: str) -> None:
    for response in (post_envelope(sentry, _ignored_only(), key=key),
                     post_envelope(sentry, _ignored_only(dsn=dsn(sentry, key)), key=None)):
        assert response.status_code == 401
        assert response.json()["detail"] == "unknown or revoked Sentry key"
        assert key not in response.text
    assert key not in sentry.log()


def test_a_key_of_another_project_is_403(sentry: Server) -> None:
    response = post_envelope(sentry, _ignored_only(), key=OTHER_KEY)
    assert response.status_code == 403
    assert f"project {project_id(sentry)}" in response.json()["detail"]
    response = post_envelope(sentry, _ignored_only(dsn=dsn(sentry, OTHER_KEY)), key=None)
    assert response.status_code == 403
    # Its own project takes it; a project that does not exist is anyone's 403.
    assert post_envelope(sentry, _ignored_only(), key=OTHER_KEY,
                         project=project_id(sentry, "other")).status_code == 200
    assert post_envelope(sentry, _ignored_only(), project=999_999).status_code == 403


def test_a_sentry_auth_header_without_a_key_is_401(sentry: Server) -> None:
    response = post_envelope(sentry, _ignored_only(), key=None,
                             headers={"X-Sentry-Auth": "Sentry sentry_version=7"})
    assert response.status_code == 401
    assert "no sentry_key" in response.json()["detail"]


def test_a_framing_error_is_400_naming_the_item(sentry: Server) -> None:
    body = b'{}\n{"type":"session","length":3}\n{}\n{"type":"session","length":99}\nab\n'
    response = post_envelope(sentry, body)
    assert response.status_code == 400
    answer = response.json()
    assert answer["detail"] == "the envelope is malformed"
    assert answer["causes"][0].startswith("items[0].length:")


def test_a_payload_that_is_not_json_is_400_naming_the_item(sentry: Server) -> None:
    body = envelope({}, [item("session", SESSION), item("event", b"not json")])
    response = post_envelope(sentry, body)
    assert response.status_code == 400
    assert response.json()["causes"][0].startswith("items[1]: the event payload")


@pytest.mark.parametrize("content_type", ["application/x-sentry-envelope", "application/json",
                                          "text/plain;charset=UTF-8", "", "x/whatever"])
def test_any_content_type_is_read(sentry: Server, content_type: str) -> None:
    response = post_envelope(sentry, _ignored_only(),
                             headers={"Content-Type": content_type})
    assert response.status_code == 200, response.text


def test_paths_without_the_final_slash_and_unknown_paths(sentry: Server) -> None:
    pid = project_id(sentry)
    response = requests.post(f"{sentry.base}/api/{pid}/envelope", data=_ignored_only(),
                             headers=auth_header(), timeout=10)
    assert response.status_code == 200
    response = requests.post(f"{sentry.base}/api/{'9' * 40}/envelope/", data=_ignored_only(),
                             headers=auth_header(), timeout=10)
    assert response.status_code == 404


def test_a_get_is_405(sentry: Server) -> None:
    response = requests.get(f"{sentry.base}/api/{project_id(sentry)}/envelope/", timeout=10)
    assert response.status_code == 405


def test_json_of_the_store_endpoint_must_be_an_object(sentry: Server) -> None:
    response = post_envelope(sentry, json.dumps([1, 2]).encode(), path="store")
    assert response.status_code == 400
    assert "JSON object" in response.json()["detail"]


@pytest.mark.parametrize(("levels", "status"), [(600, 200), (1100, 400)])
def test_an_event_nested_past_the_body_bound_is_cut_up_to_orjsons_limit(
        sentry: Server, levels: int, status: int) -> None:
    """An event item is read within the door's own bounds (receiver/jsonbody.parse_json,
    `bounded`): nesting past the 128 levels of other JSON bodies is cut, as Sentry
    normalises it, up to the parser's 1,024 levels; past that, a 400 naming the item."""
    event_id = f"{levels:032x}"
    deep = b'{"d":' * levels + b'"leaf"' + b"}" * levels
    payload = (b'{"event_id":"' + event_id.encode() + b'","message":"deep",'
               b'"contexts":{"deep":' + deep + b"}}")
    response = post_envelope(sentry, envelope({"event_id": event_id}, [item("event", payload)]))
    assert response.status_code == status, response.text
    if status == 400:
        assert response.json()["causes"][0].startswith("items[0]: the event payload")
        return
    context = sentry.query("SELECT context FROM error_events WHERE occurrence_key = :k",
                           k=event_id)[0][0]
    kept = (json.loads(context) if isinstance(context, str) else context)["contexts"]["deep"]
    levels_kept = 0
    while isinstance(kept, dict):
        kept, levels_kept = kept["d"], levels_kept + 1
    assert kept == "[…]" and levels_kept < 8
