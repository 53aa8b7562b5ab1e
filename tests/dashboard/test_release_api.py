"""The Sentry-compatible upload and release API (dashboard/release_api.py), driven by
the real `sentry-cli` (tests/js) against a running Sounding on SQLite and PostgreSQL:
artifact bundles through chunk-upload and assemble, idempotent; releases, finalize and
deploys that the Deploys read API shows; refusals (401, 403, 400 naming the problem)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from model.timeutil import now_us
from storage.accounts import tokens as api_tokens
from storage.accounts import users
from storage.audit.log import Actor
from storage.store import Store
from tests.support import clients
from tests.support.jsbuild import esbuild, sentry_cli
from tests.support.server import Server, collectors

pytestmark = pytest.mark.clients(clients.SENTRY_CLI)

API = "/api/0/organizations/sounding"


def make_token(db_url: str, email: str, role: str, scopes: tuple[str, ...] = ("releases", "read")
               ) -> str:
    """A personal API token of a new account with `role` (storage/accounts/tokens.py)."""
    store = Store(db_url)
    try:
        user = users.create(store, email, "correct horse battery", role, now_us())
        token, _ = api_tokens.create(store, "ci", scopes, now_us(), Actor.cli(), user.id)
    finally:
        store.close()
    return token


def project_token(db_url: str, project: str, scopes: tuple[str, ...] = ("releases",)) -> str:
    """A service token limited to `project`, as CI of that project holds one."""
    store = Store(db_url)
    try:
        token, _ = api_tokens.create(store, f"ci of {project}", scopes, now_us(), Actor.cli(),
                                 projects=api_tokens.project_ids(store, [project]))
    finally:
        store.close()
    return token


@pytest.fixture(scope="module")
def world(module_db_url: str, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[tuple[Server, dict[str, str], Path]]:
    """A collector with projects acme and other, a member's and a viewer's token, and
    the fixture app built and injected once."""
    with collectors(tmp_path_factory.mktemp("release")) as start:
        server = start(module_db_url, keys={"acme": "key-acme", "other": "key-other"})
        made = {"member": make_token(module_db_url, "dev@example.com", "member"),
                "viewer": make_token(module_db_url, "viewer@example.com", "viewer"),
                "other": project_token(module_db_url, "other"),
                "read": project_token(module_db_url, "acme", ("read",))}
        dist = tmp_path_factory.mktemp("dist")
        esbuild(dist)
        sentry_cli("sourcemaps", "inject", str(dist), url=server.base, token=None)
        yield server, made, dist


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_sentry_cli_uploads_an_artifact_bundle_once(world: tuple[Server, dict, Path]) -> None:
    server, tokens, dist = world
    done = sentry_cli("sourcemaps", "upload", str(dist), url=server.base,
                      token=tokens["member"])
    assert "debug id" in done.stdout, done.stdout
    rows = server.query("SELECT kind, url, debug_id FROM artifact_files f JOIN projects p "
                        "ON p.id = f.project_id WHERE p.name = 'acme' ORDER BY kind")
    assert [(r.kind, r.url) for r in rows] == [("minified_source", "~/app.js"),
                                               ("source_map", "~/app.js.map")]
    injected = (dist / "app.js").read_text()
    assert rows[0].debug_id and rows[0].debug_id in injected
    assert rows[0].debug_id == rows[1].debug_id
    # Again: the bundle is known, nothing is sent or stored twice.
    again = sentry_cli("sourcemaps", "upload", str(dist), url=server.base,
                       token=tokens["member"])
    assert "Nothing to upload" in again.stdout + again.stderr, again.stdout
    assert server.query("SELECT count(*) FROM artifact_bundles")[0][0] == 1
    assert server.query("SELECT count(*) FROM artifact_chunks")[0][0] == 0  # assembled


def test_the_same_chunk_twice_is_stored_once(world: tuple[Server, dict, Path]) -> None:
    server, tokens, _ = world
    data = b"chunk that is never assembled " * 10
    name = hashlib.sha1(data).hexdigest()
    for _ in range(2):
        answer = requests.post(server.base + API + "/chunk-upload/", headers=auth(
            tokens["member"]), files=[("file_gzip", (name, gzip.compress(data)))], timeout=10)
        assert answer.status_code == 200, answer.text
    assert server.query("SELECT count(*) FROM artifact_chunks WHERE checksum = :c",
                        c=name)[0][0] == 1


def test_chunk_upload_options_say_what_the_cli_needs(world: tuple[Server, dict, Path]
                                                     ) -> None:
    server, tokens, _ = world
    answer = requests.get(server.base + API + "/chunk-upload/", headers=auth(tokens["member"]),
                          timeout=10)
    assert answer.status_code == 200, answer.text
    options = answer.json()
    assert "artifact_bundles" in options["accept"] and options["hashAlgorithm"] == "sha1"
    assert options["chunkSize"] * options["chunksPerRequest"] <= 5 * 1024 * 1024


def test_no_token_is_401_and_a_viewers_token_403(world: tuple[Server, dict, Path]) -> None:
    server, tokens, dist = world
    bare = requests.get(server.base + API + "/chunk-upload/", timeout=10)
    assert bare.status_code == 401 and "Bearer" in bare.json()["detail"]
    done = sentry_cli("sourcemaps", "upload", str(dist), url=server.base, token=None,
                      check=False)
    assert done.returncode != 0
    refused = requests.post(server.base + API + "/artifactbundle/assemble/",
                            headers=auth(tokens["viewer"]), timeout=10,
                            json={"checksum": "0" * 40, "chunks": [], "projects": ["acme"]})
    assert refused.status_code == 403, refused.text
    assert "may not upload" in refused.json()["detail"]
    cli = sentry_cli("sourcemaps", "upload", str(dist), url=server.base,
                     token=tokens["viewer"], check=False)
    assert cli.returncode != 0 and "may not upload" in cli.stdout + cli.stderr


def test_a_token_of_another_project_or_without_the_scope_is_403(
        world: tuple[Server, dict, Path]) -> None:
    server, tokens, dist = world
    for name, says in (("other", "may not upload to project 'acme'"),
                       ("read", "has no releases scope")):
        refused = requests.post(server.base + API + "/artifactbundle/assemble/",
                                headers=auth(tokens[name]), timeout=10,
                                json={"checksum": "0" * 40, "chunks": [], "projects": ["acme"]})
        assert refused.status_code == 403 and says in refused.json()["detail"], refused.text
        cli = sentry_cli("sourcemaps", "upload", str(dist), url=server.base,
                         token=tokens[name], check=False)
        assert cli.returncode != 0 and says in cli.stdout + cli.stderr, cli.stdout
    # Its own project it may upload to: past the token check, to the bundle's (400).
    own = requests.post(server.base + API + "/artifactbundle/assemble/",
                        headers=auth(tokens["other"]), timeout=10,
                        json={"checksum": "0" * 40, "chunks": [], "projects": ["other"]})
    assert own.status_code == 400 and "checksum" in own.json()["detail"], own.text


def bundle(files: dict[str, bytes], manifest: dict) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("manifest.json", json.dumps(manifest))
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


def assemble(server: Server, token: str, data: bytes, project: str = "acme"
             ) -> requests.Response:
    name = hashlib.sha1(data).hexdigest()
    sent = requests.post(server.base + API + "/chunk-upload/", headers=auth(token),
                         files=[("file", (name, data))], timeout=10)
    assert sent.status_code == 200, sent.text
    return requests.post(server.base + API + "/artifactbundle/assemble/", headers=auth(token),
                         json={"checksum": name, "chunks": [name], "projects": [project]},
                         timeout=10)


MAP_ENTRY = {"type": "source_map", "url": "~/x.js.map", "headers": {}}


@pytest.mark.parametrize(("data", "problem"), [
    (b"PK\x03\x04 this is no zip at all", "not a zip archive"),
    (bundle({"files/x.js.map": b"{not json"}, {"files": {"files/x.js.map": MAP_ENTRY}}),
     "source map that is not JSON"),
    (bundle({"files/x.js.map": b'{"version": 3, "mappings": ""}'},
            {"files": {"files/x.js.map": MAP_ENTRY}, "project": "other"}),
     "claims project 'other'"),
    (bundle({}, {"nothing": True}), "no 'files' object"),
])
def test_bad_bundles_are_refused_naming_the_problem(world: tuple[Server, dict, Path],
                                                    data: bytes, problem: str) -> None:
    server, tokens, _ = world
    before = server.query("SELECT count(*) FROM artifact_files")[0][0]
    answer = assemble(server, tokens["member"], data)
    assert answer.status_code == 400, answer.text
    assert problem in answer.json()["detail"]
    assert server.query("SELECT count(*) FROM artifact_files")[0][0] == before


def test_a_chunk_whose_name_is_not_its_checksum_is_refused(world: tuple[Server, dict, Path]
                                                           ) -> None:
    server, tokens, _ = world
    answer = requests.post(server.base + API + "/chunk-upload/", headers=auth(tokens["member"]),
                           files=[("file", ("a" * 40, b"something else"))], timeout=10)
    assert answer.status_code == 400 and "not its name" in answer.json()["detail"]


def test_releases_new_finalize_and_deploys_new_make_a_deploy(
        world: tuple[Server, dict, Path]) -> None:
    server, tokens, _ = world
    token = tokens["member"]
    sentry_cli("releases", "new", "shop@2.0.0", url=server.base, token=token)
    sentry_cli("releases", "finalize", "shop@2.0.0", url=server.base, token=token)
    sentry_cli("deploys", "new", "--release", "shop@2.0.0", "-e", "production",
               url=server.base, token=token)
    release = server.query("SELECT finalized_us FROM releases WHERE version = 'shop@2.0.0'")
    assert release and release[0].finalized_us is not None
    deploys = requests.get(server.base + "/api/v1/projects/acme/deploys", headers=auth(token),
                           timeout=10).json()
    shown = [d["deploy"] for d in deploys["deploys"]] if "deploys" in deploys else []
    assert any(d["version"] == "shop@2.0.0" and d["env"] == "production" for d in shown), deploys
    # Not in the other project, which the release is not of.
    other = requests.get(server.base + "/api/v1/projects/other/deploys", headers=auth(token),
                         timeout=10).json()
    assert "shop@2.0.0" not in json.dumps(other)


def test_releases_need_a_version_and_projects(world: tuple[Server, dict, Path]) -> None:
    server, tokens, _ = world
    answer = requests.post(server.base + API + "/releases/", headers=auth(tokens["member"]),
                           json={"version": "1.0"}, timeout=10)
    assert answer.status_code == 400 and "'projects'" in answer.json()["detail"]
    unknown = requests.post(server.base + API + "/releases/", headers=auth(tokens["member"]),
                            json={"version": "1.0", "projects": ["nope"]}, timeout=10)
    assert unknown.status_code == 404 and "nope" in unknown.json()["detail"]


def test_the_release_page_lists_artifacts_debug_ids_and_deploys(
        world: tuple[Server, dict, Path], tmp_path: Path) -> None:
    server, tokens, _ = world
    token = tokens["member"]
    dist = tmp_path / "dist"
    esbuild(dist, extra=("--banner:js=/* release page */",))
    sentry_cli("sourcemaps", "inject", str(dist), url=server.base, token=None)
    sentry_cli("sourcemaps", "upload", "--release", "shop@3.0.0", str(dist), url=server.base,
               token=token)
    sentry_cli("deploys", "new", "--release", "shop@3.0.0", "-e", "staging",
               url=server.base, token=token)
    debug_id = server.query("SELECT debug_id FROM artifact_files WHERE release = 'shop@3.0.0'"
                            )[0][0]
    document = requests.get(server.base + "/api/v1/projects/acme/releases/shop@3.0.0",
                            headers=auth(token), timeout=10).json()
    assert {(a["url"], a["debug_id"]) for a in document["artifacts"]} == {
        ("~/app.js", debug_id), ("~/app.js.map", debug_id)}
    assert [d["env"] for d in document["deploys"]] == ["staging"]
    page = requests.get(server.base + "/projects/acme/releases/shop@3.0.0",
                        headers=auth(token), timeout=10)
    assert page.status_code == 200
    assert debug_id in page.text and "~/app.js.map" in page.text and "staging" in page.text
    deploys = requests.get(server.base + "/projects/acme/deploys", headers=auth(token),
                           timeout=10)
    assert 'href="/projects/acme/releases/shop%403.0.0"' in deploys.text
