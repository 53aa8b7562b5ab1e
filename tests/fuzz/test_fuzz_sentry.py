"""Fuzzing the Sentry door (receiver/sentry/) over real HTTP, on SQLite and PostgreSQL:
envelopes framed right and wrong around real sentry-sdk payloads mutated, store
bodies, content encodings, and every way a key can come (or not).

Per request: 200 with `{"id": <32 hex>}`, or a 4xx in Sentry's form (`detail`
naming the problem, `causes` strings when there are some); never a 5xx, never a
dropped connection, never a traceback in the server's log. And whatever was
accepted reads back: the event through the read API as it was decoded, its group
page and the error list as HTML holding none of the client's text unescaped.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from receiver.jsonbody import parse_json
from receiver.sentry.event import decode_event
from tests.dashboard.data import ADMIN_TOKEN
from tests.fuzz import sentry_strategies as ss
from tests.fuzz import strategies as s
from tests.fuzz.doors import expect, fuzz, logged_in, strict_json, violation
from tests.fuzz.strategies import weighted
from tests.receiver.sentry.helpers import KEY, OTHER_KEY, project_id
from tests.support import clients
from tests.support.server import Server

pytestmark = pytest.mark.clients(clients.SENTRY_SDK_2)

EVENT_ID = re.compile(r"[0-9a-f]{32}")
# Bodies this small are in the server's buffer whole before it answers: a connection
# closed on them is a dropped answer, not a refusal that raced the upload.
SMALL_BODY = 64 * 1024
UNENCODABLE = re.compile(
    r'^sounding_records_dropped_total\{reason="unencodable",[^}]*\} (\S+)$', re.M)


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    with requests.Session() as session:
        yield session


@pytest.fixture(scope="module")
def reader(sentry_server: Server) -> Iterator[requests.Session]:
    with logged_in(sentry_server) as session:
        yield session


@dataclass
class Watch:
    """What the checks have seen of the server: how much of its log, and how many
    records it dropped as unencodable (so that each check sees only its own)."""

    log_at: int = 0
    unencodable: float = 0.0


@pytest.fixture(scope="module")
def watch(sentry_server: Server) -> Watch:
    return Watch()


def unencodable(server: Server) -> float:
    metrics = requests.get(server.base + "/metrics", timeout=10).text
    return sum(float(v) for v in UNENCODABLE.findall(metrics))


def check_sentry(server: Server, watch: Watch, door: str,
                 response: requests.Response | None, sent: bytes) -> int:
    """Check one answer of the Sentry door; its status (0: the connection dropped)."""
    log = server.log()
    new, watch.log_at = log[watch.log_at:], len(log)
    expect("Traceback" not in new, door, sent, new[-3000:], "a traceback in the log")
    if response is not None and response.status_code == 200:
        # A record the store cannot hold is dropped after the answer: what was
        # acknowledged would be lost.
        total = unencodable(server)
        dropped, watch.unencodable = total - watch.unencodable, total
        expect(dropped == 0, door, sent, f"{dropped:.0f} dropped",
               "200, but records were dropped as unencodable")
    if response is None:
        expect(len(sent) > SMALL_BODY, door, sent, "no answer", "the connection dropped")
        return 0
    status, answer = response.status_code, f"{response.status_code} {response.text}"
    try:
        body = strict_json(response.text)
    except ValueError:
        violation(door, sent, answer, "an answer without a JSON body")
        return status
    if status == 200:
        expect(isinstance(body, dict) and isinstance(body.get("id"), str)
               and EVENT_ID.fullmatch(body["id"]) is not None, door, sent, answer,
               "a 200 without an event id")
        return status
    if not expect(400 <= status < 500, door, sent, answer, f"status {status}"):
        return status
    causes = body.get("causes", ["-"]) if isinstance(body, dict) else None
    expect(isinstance(body, dict) and isinstance(body.get("detail"), str)
           and bool(body["detail"]) and isinstance(causes, list) and bool(causes)
           and all(isinstance(c, str) and c for c in causes),
           door, sent, answer, "a 4xx whose body names no problem")
    return status


def send(server: Server, session: requests.Session, path: str, data: bytes,
         headers: dict[str, str], params: dict[str, str] | None = None
         ) -> requests.Response | None:
    try:
        return session.post(server.base + path, data=data, headers=headers, params=params,
                            timeout=30)
    except requests.ConnectionError:
        return None


def authentication(server: Server, form: str, data: st.DataObject
                   ) -> tuple[dict[str, str], dict[str, str], str | None]:
    """(headers, query, DSN for the envelope header) of one way to authenticate."""
    sentry_auth = f"Sentry sentry_key={KEY}, sentry_version=7, sentry_client=fuzz/1.0"
    dsn = f"{server.base.replace('http://', f'http://{KEY}@')}/{project_id(server)}"
    if form == "x-sentry-auth":
        return {"X-Sentry-Auth": sentry_auth}, {}, None
    if form == "authorization":
        return {"Authorization": sentry_auth}, {}, None
    if form == "query":
        return {}, {"sentry_key": KEY, "sentry_version": "7"}, None
    if form == "dsn":
        return {}, {}, dsn
    if form == "unknown":
        return {"X-Sentry-Auth": "Sentry sentry_key=" + "0" * 32}, {}, None
    if form == "other-project":
        return {"X-Sentry-Auth": f"Sentry sentry_key={OTHER_KEY}"}, {}, None
    if form == "bearer":
        return {"Authorization": f"Bearer {KEY}"}, {}, None
    if form == "odd-header":
        odd = data.draw(st.sampled_from(ss.ODD_AUTH_HEADERS)).replace("{key}", KEY)
        return {data.draw(st.sampled_from(["X-Sentry-Auth", "Authorization"])): odd}, {}, None
    if form == "odd-dsn":
        odd = data.draw(st.sampled_from(ss.ODD_DSNS))
        return {}, {}, odd.replace("{key}", KEY) if isinstance(odd, str) else odd
    return {}, {}, None


def project_path(server: Server, kind: str, data: st.DataObject) -> tuple[str, bool]:
    """A path of the door, and whether its project is the key's."""
    right = str(project_id(server))
    pid = data.draw(weighted((6, st.just(right)), (1, st.sampled_from(
        [str(project_id(server, "other")), "0", "9" * 18, "0" + right]))))
    slash = data.draw(st.sampled_from(["/", "/", ""]))
    return f"/api/{pid}/{kind}{slash}", int(pid) == int(right)


def request(server: Server, session: requests.Session, watch: Watch, kind: str,
            body: Any, data: st.DataObject) -> int:
    """Send `body` (bytes, or an envelope written with the form's DSN) to the door,
    with a drawn authentication and transport, and check the answer."""
    form = data.draw(st.sampled_from(ss.AUTH_FORMS))
    headers, query, dsn = authentication(server, form, data)
    raw = body.render(dsn) if isinstance(body, ss.Envelope) else body
    if data.draw(st.integers(0, 9)) == 0 and raw:  # cut anywhere
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    transport, sent = data.draw(s.transports(raw, "application/x-sentry-envelope"))
    path, own_project = project_path(server, kind, data)
    response = send(server, session, path, sent, {**transport, **headers}, query)
    door = f"{path} auth={form} headers={transport}"
    status = check_sentry(server, watch, door, response, sent)
    if form in ss.GOOD_AUTH and own_project:
        expect(status not in (401, 403), door, sent, status, "the right key was refused")
    if form in ("none", "unknown", "other-project", "bearer") or not own_project:
        expect(status != 200, door, sent, status, "accepted without the project's key")
    return status


@fuzz(120)
@given(envelope=ss.envelopes(), data=st.data())
def test_random_envelopes(sentry_server: Server, session: requests.Session,
                          watch: Watch, envelope: ss.Envelope,
                          data: st.DataObject) -> None:
    request(sentry_server, session, watch, "envelope", envelope, data)


@fuzz(60)
@given(body=weighted((3, ss.events().map(lambda m: s.dumps(m.body))),
                     (1, ss.transactions().map(lambda m: s.dumps({**m.body,
                                                                  "type": "transaction"}))),
                     (1, s.random_bodies())), data=st.data())
def test_random_store_bodies(sentry_server: Server, session: requests.Session,
                             watch: Watch, body: bytes, data: st.DataObject) -> None:
    request(sentry_server, session, watch, "store", body, data)


# --- read-back ------------------------------------------------------------------------

PAGES = "/projects/acme"
API = "/api/v1/projects/acme"


def stored(value: Any) -> Any:
    """A decoded value as the store gives it back: a text column's with NUL as U+FFFD
    (storage/wire/storable.py), a JSON column's as JSON."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    return json.loads(json.dumps(value))


def difference(sent: Any, shown: Any, at: str = "") -> str | None:
    """Where `shown` first differs from `sent`, and how; None when they are equal."""
    if type(sent) is not type(shown):
        return f"{at}: {sent!r:.200} became {shown!r:.200}"
    if isinstance(sent, dict):
        if sent.keys() != shown.keys():
            return f"{at}: keys {sorted(sent.keys() ^ shown.keys())!r:.400} differ"
        return next((d for k in sent if (d := difference(sent[k], shown[k], f"{at}.{k}"))),
                    None)
    if isinstance(sent, list):
        if len(sent) != len(shown):
            return f"{at}: {len(sent)} items became {len(shown)}"
        return next((d for i, (a, b) in enumerate(zip(sent, shown, strict=True))
                     if (d := difference(a, b, f"{at}[{i}]"))), None)
    return None if sent == shown else f"{at}: {sent!r:.200} became {shown!r:.200}"


def read(server: Server, reader: requests.Session, path: str, sent: bytes) -> str | None:
    response = reader.get(server.base + path, timeout=30, allow_redirects=False,
                          headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
                          if path.startswith("/api/") else {})
    if response.status_code != 200:
        violation(f"GET {path}", sent, f"{response.status_code} {response.text}",
                  "an accepted event is not readable")
        return None
    return response.text


@fuzz(40)
@given(mutated=ss.events(), rnd=st.randoms(use_true_random=False),
       via=st.sampled_from(["envelope", "store"]),
       encoding=st.sampled_from([None, "gzip", "deflate", "br"]))
def test_accepted_events_read_back(sentry_server: Server, reader: requests.Session,
                                   watch: Watch, mutated: s.Mutated,
                                   rnd: random.Random, via: str, encoding: str | None) -> None:
    server, marker = sentry_server, uuid.uuid4().hex
    event = ss.plant(mutated.body, marker, rnd)
    event["event_id"] = marker  # stored as its occurrence key: how it is found again
    payload = s.dumps(event)
    body = payload if via == "store" else ss.Envelope(
        {"event_id": marker}, [(s.dumps({"type": "event", "length": len(payload)}),
                                payload)]).render()
    headers = {"X-Sentry-Auth": f"Sentry sentry_key={KEY}, sentry_version=7",
               **({"Content-Encoding": encoding} if encoding else {})}
    path = f"/api/{project_id(server)}/{via}/"
    response = send(server, requests.Session(), path, s.encode(body, encoding), headers)
    status = check_sentry(server, watch, path, response, body)
    if s.depth_of(event) <= s.BODY_MAX_DEPTH and not s.refusable(event):
        # Nothing in an event's fields is ever an error to the SDK.
        expect(status == 200, path, body, status, "a JSON event object was refused")
    if status != 200:
        return
    assert response is not None and response.json() == {"id": marker}
    # Answered once committed (receiver/sentry/door.py): the rows are there now.
    rows = server.query(
        "SELECT g.id, e.id FROM error_events e JOIN error_groups g ON g.fingerprint = "
        "e.fingerprint AND g.project_id = e.project_id WHERE e.occurrence_key = :k", k=marker)
    if not expect(bool(rows), path, body, status, "200, but the event is not stored"):
        return
    group, event_row = rows[0]
    decoded = decode_event(parse_json(payload), 0)
    api = read(server, reader, f"{API}/error-groups/{group}?event={event_row}", body)
    if api is not None:
        shown = strict_json(api)["event"]
        for name in ("exceptions", "tags", "context", "level", "environment", "release"):
            differ = difference(stored(getattr(decoded, name)), shown[name])
            expect(differ is None, f"GET {API}/error-groups", body, differ,
                   f"{name} is not what was decoded")
        expect(shown["unreadable"] == [], f"GET {API}/error-groups", body,
               shown["unreadable"], "stored values are unreadable")
    for page in (f"{PAGES}/errors/{group}?event={event_row}", f"{PAGES}/errors/{group}",
                 f"{PAGES}/errors",
                 *[f"{PAGES}/errors?{name}={quote(value, safe='')}"
                   for name in ("environment", "release", "service")
                   if isinstance(value := getattr(decoded, name, None), str) and value]):
        html = read(server, reader, page, body)
        if html is not None:
            expect(not ss.raw_markup(html, marker), f"GET {page}", body,
                   html[max(html.find(marker) - 300, 0):][:600], "client text unescaped")
            # The group page shows the planted environment and release (its facets):
            # the marker is there, escaped, so the check above has something to see.
            expect(marker in html or "/errors/" not in page, f"GET {page}", body,
                   html[:600], "the group page shows none of the event's text")

