"""The part of Sentry's API that `sentry-cli` and the bundler plugins (@sentry/vite-plugin,
@sentry/webpack-plugin) use to upload source maps and make releases and deploys,
under /api/0/ on Sounding's HTTP port (docs/source-maps.md). Found by running the
tools against a recorder: nothing else of Sentry's API is served.

- GET  organizations/{org}/chunk-upload/: how to upload (chunk size, gzip, the
  `artifact_bundles` capabilities); POST: the chunks (multipart `file` or
  `file_gzip`, each named by its SHA-1).
- POST organizations/{org}/artifactbundle/assemble/: {checksum, chunks, projects,
  version?, dist?} -> {state, missingChunks}; `not_found` lists the chunks to send.
- POST organizations/{org}/releases/, PUT organizations/{org}/releases/{version}/
  (finalize), POST organizations/{org}/releases/{version}/deploys/; a PUT or a deploy
  naming no project is for the release's projects.
- GET organizations/{org}/ (the bundler plugins' CLI asks it first) stays a 404: the
  CLI then uses SENTRY_URL itself, where an answer would send it to a region URL.

Why here, in the dashboard component: these requests manage what a project holds
(artifacts, releases, deploys) with an API token (the releases scope), as the read
API does; they are not telemetry into the pipeline, and a receiver may not reach the
store (.importlinter). Every refusal is {"detail": ...}, which the CLI prints.
"""

from __future__ import annotations

import zlib
from typing import Any
from urllib.parse import quote

from tornado.web import HTTPError

from dashboard.base import DashboardHandler
from dashboard.release_auth import (
    Forbidden,
    Unauthorized,
    UnknownProject,
    authorize_release_upload,
)
from model.timeutil import iso_from_us, parse_iso8601_us
from storage.artifacts import assemble, chunks, releases
from storage.artifacts.chunks import BadUpload, check_checksum
from storage.queries import projects as pq

# The HTTP receiver takes bodies up to 5 MiB (receivers.http.max_body_bytes):
# 1 MiB chunks (a power of two, which sentry-cli before 2.39.1 needs), four a request.
CHUNK_SIZE = 1024 * 1024
CHUNKS_PER_REQUEST = 4
MAX_REQUEST_SIZE = CHUNK_SIZE * CHUNKS_PER_REQUEST
ACCEPT = ["release_files", "sources", "artifact_bundles", "artifact_bundles_v2"]
MAX_PROJECTS = 50
MAX_VERSION = 200
ORG = r"/api/0/organizations/([^/]+)"


class ReleaseApiHandler(DashboardHandler):
    """A bearer token only, checked by authorize_release_upload: no session cookie,
    so no anti-forgery token either."""

    api = True
    error_key = "detail"  # what sentry-cli prints of a refusal
    login_required = False

    def check_xsrf_cookie(self) -> None:
        return None  # no cookie is read: nothing a forged request could borrow

    def bearer(self) -> str | None:
        scheme, _, token = (self.request.headers.get("Authorization") or "").strip() \
            .partition(" ")
        return token.strip() if scheme.lower() == "bearer" and token.strip() else None

    async def upload_project(self, org: str, project: str | None) -> int | None:
        try:
            return await self.run(authorize_release_upload, self.store, self.bearer(), org,
                                  project)
        except Unauthorized as exc:
            raise HTTPError(401, str(exc)) from exc
        except Forbidden as exc:
            raise HTTPError(403, str(exc)) from exc
        except UnknownProject as exc:
            raise HTTPError(404, str(exc)) from exc

    async def named_projects(self, org: str, names: Any, required: bool = True) -> dict[int, str]:
        """The named projects (id -> name), each one the token may upload to."""
        if names is None and not required:
            return {}
        if (not isinstance(names, list) or not names or len(names) > MAX_PROJECTS
                or not all(isinstance(n, str) and n for n in names)):
            raise HTTPError(400, f"'projects' must be a list of 1 to {MAX_PROJECTS} project "
                                 "names")
        found = {}
        for name in dict.fromkeys(names):
            project_id = await self.upload_project(org, name)
            assert project_id is not None
            found[project_id] = name
        return found

    async def release_projects(self, org: str, version: str) -> dict[int, str]:
        """The projects of a release, among those the token may upload to; 404 when none."""
        allowed = await self.authorized_projects(org)
        ids = await self.run(releases.projects_of, self.store, version, list(allowed))
        if not ids:
            raise HTTPError(404, f"no project you may upload to has release {version!r}: "
                                 "run `sentry-cli releases new` first")
        return {i: allowed[i] for i in ids}

    async def authorized_projects(self, org: str) -> dict[int, str]:
        every = await self.run(pq.list_projects, self.store)
        allowed = {}
        for project in every:
            try:
                await self.upload_project(org, project.name)
            except HTTPError as exc:
                if exc.status_code != 403:
                    raise
                continue
            allowed[project.id] = project.name
        return allowed

    def body(self) -> dict[str, Any]:
        document = self.json_body('{"version": "1.2.3", "projects": ["web"]}')
        if not isinstance(document, dict):
            raise HTTPError(400, "the body must be a JSON object")
        return document

    @staticmethod
    def version_of(value: Any) -> str:
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_VERSION \
                or "/" in value:
            raise HTTPError(400, f"'version' must be 1 to {MAX_VERSION} characters, no '/'")
        return value

    @staticmethod
    def time_of(document: dict[str, Any], key: str, default: int) -> int:
        value = document.get(key)
        if value is None:
            return default
        try:
            return parse_iso8601_us(str(value))
        except ValueError as exc:
            raise HTTPError(400, f"{key!r} must be an RFC 3339 time, not {value!r}") from exc


class ChunkUploadApi(ReleaseApiHandler):
    async def get(self, org: str) -> None:
        await self.upload_project(org, None)
        # Absolute: the bundler plugins' CLI (npm `sentry`) refuses a relative URL, as
        # Sentry itself answers newer clients.
        self.write_json({
            "url": f"{self.request.protocol}://{self.request.host}"
                   f"/api/0/organizations/{quote(org, safe='')}/chunk-upload/",
            "chunkSize": CHUNK_SIZE, "chunksPerRequest": CHUNKS_PER_REQUEST,
            "maxFileSize": assemble.MAX_BUNDLE_BYTES, "maxRequestSize": MAX_REQUEST_SIZE,
            "concurrency": 1, "hashAlgorithm": "sha1", "compression": ["gzip"],
            "accept": ACCEPT})

    async def post(self, org: str) -> None:
        await self.upload_project(org, None)
        files = self.request.files
        parts = [(f, False) for f in files.get("file", [])] + \
            [(f, True) for f in files.get("file_gzip", [])]
        if len(parts) > CHUNKS_PER_REQUEST:
            raise HTTPError(400, f"at most {CHUNKS_PER_REQUEST} chunks a request")
        received = []
        try:
            for part, gzipped in parts:
                data = _gunzip(part.body, part.filename) if gzipped else part.body
                if len(data) > CHUNK_SIZE:
                    raise BadUpload(f"chunk {part.filename}: larger than {CHUNK_SIZE} bytes")
                received.append(chunks.verified(part.filename, data))
        except BadUpload as exc:
            raise HTTPError(400, str(exc)) from exc
        await self.run(chunks.save, self.store, received, self.now_us)
        self.write_json({})


def _gunzip(data: bytes, name: str) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, CHUNK_SIZE + 1)
    except zlib.error as exc:
        raise BadUpload(f"chunk {name}: not gzip ({exc})") from exc
    if len(out) > CHUNK_SIZE or not inflater.eof:
        raise BadUpload(f"chunk {name}: larger than {CHUNK_SIZE} bytes inflated, or cut short")
    return out


class AssembleApi(ReleaseApiHandler):
    async def post(self, org: str) -> None:
        document = self.body()
        projects = await self.named_projects(org, document.get("projects"))
        raw_chunks = document.get("chunks")
        try:
            checksum = check_checksum(document.get("checksum"), "'checksum'")
            if not isinstance(raw_chunks, list) or len(raw_chunks) > 100_000:
                raise BadUpload("'chunks' must be a list of SHA-1 checksums")
            listed = [check_checksum(c, "each of 'chunks'") for c in raw_chunks]
            version = document.get("version")
            dist = document.get("dist")
            request = assemble.Request(
                checksum, listed, None if version is None else self.version_of(version),
                dist[:64] if isinstance(dist, str) and dist else None)
            outcome = await self.run(assemble.assemble, self.store, projects, request,
                                     self.now_us)
        except BadUpload as exc:
            raise HTTPError(400, str(exc)) from exc
        self.write_json({"state": outcome.state, "missingChunks": outcome.missing,
                         "detail": None})


def _release_document(version: str, projects: dict[int, str], created_us: int,
                      released_us: int | None) -> dict[str, Any]:
    """What the CLI reads of a release (it prints the version)."""
    return {"version": version, "shortVersion": version, "ref": None, "url": None,
            "dateCreated": iso_from_us(created_us),
            "dateReleased": None if released_us is None else iso_from_us(released_us),
            "projects": [{"slug": n, "name": n} for n in projects.values()],
            "newGroups": 0, "commitCount": 0, "deployCount": 0, "lastDeploy": None,
            "authors": [], "owner": None, "data": {}, "lastEvent": None, "firstEvent": None}


class ReleasesApi(ReleaseApiHandler):
    async def post(self, org: str) -> None:
        document = self.body()
        version = self.version_of(document.get("version"))
        projects = await self.named_projects(org, document.get("projects"))
        released = document.get("dateReleased")
        released_us = None if released is None else self.time_of(document, "dateReleased", 0)
        await self.run(releases.create, self.store, list(projects), version, self.now_us,
                       released_us)
        self.set_status(201)
        self.write_json(_release_document(version, projects, self.now_us, released_us))


class ReleaseApi(ReleaseApiHandler):
    async def put(self, org: str, version: str) -> None:
        version = self.version_of(version)
        document = self.body()
        # The Vite plugin's CLI names no project: the release's (as for deploys).
        projects = await self.named_projects(org, document.get("projects"), required=False) \
            or await self.release_projects(org, version)
        released_us = self.time_of(document, "dateReleased", self.now_us)
        await self.run(releases.finalize, self.store, list(projects), version, released_us,
                       self.now_us)
        self.write_json(_release_document(version, projects, self.now_us, released_us))


class DeploysApi(ReleaseApiHandler):
    async def post(self, org: str, version: str) -> None:
        version = self.version_of(version)
        document = self.body()
        env = document.get("environment")
        if not isinstance(env, str) or not env.strip() or len(env) > 200:
            raise HTTPError(400, "'environment' must be 1 to 200 characters")
        # The CLI names no project: the release's.
        named = await self.named_projects(org, document.get("projects"), required=False) \
            or await self.release_projects(org, version)
        finished_us = self.time_of(document, "dateFinished", self.now_us)
        name, url = document.get("name"), document.get("url")
        await self.run(releases.record_deploy, self.store, list(named), version, env,
                       name[:200] if isinstance(name, str) else None,
                       url[:500] if isinstance(url, str) else None, finished_us, self.now_us)
        self.set_status(201)
        self.write_json({"id": "0", "environment": env, "name": name, "url": url,
                         "dateStarted": document.get("dateStarted"),
                         "dateFinished": iso_from_us(finished_us)})


def routes(args: dict[str, Any]) -> list[Any]:
    return [
        (ORG + r"/chunk-upload/?", ChunkUploadApi, args),
        (ORG + r"/artifactbundle/assemble/?", AssembleApi, args),
        (ORG + r"/releases/?", ReleasesApi, args),
        (ORG + r"/releases/([^/]+)/?", ReleaseApi, args),
        (ORG + r"/releases/([^/]+)/deploys/?", DeploysApi, args),
    ]
