"""One OpenID Connect provider as Sounding's dashboard uses it: its discovery document,
the authorization request (code flow, PKCE S256, `state`, `nonce`), the code exchange
and the ID token's verification. The pages are in dashboard/sso.py; the settings and
their checks in dashboard/oidc_settings.py.

The ID token is verified with joserfc (signature, then claims): against the keys of
the provider's JWKS, never the client secret (HS*) or `none`; `iss` must be the
configured issuer, `aud` hold the client id (`azp` too when there are several
audiences), `exp` be ahead (within CLOCK_SKEW_S), and `nonce` be the one this
browser's login sent. It came from the token endpoint over a connection Sounding
opened, so it is the provider's answer; the checks still refuse anything else.

Keys rotate: an ID token naming a key (`kid`) the cached set lacks makes the set be
fetched again, at most once every JWKS_MISS_REFETCH_S (a provider's new key is in
its set before it signs with it, so one fetch finds it; more would only let a
flood of bad tokens hammer the provider). The set is also fetched again once it is
JWKS_MAX_AGE_S old, so a key the provider withdrew stops verifying.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from tornado.httpclient import HTTPRequest

from dashboard.oidc_settings import Mapped, ProviderSettings
from runtime import httppost

if TYPE_CHECKING:
    from joserfc.jwk import KeySet

CLOCK_SKEW_S = 60
DISCOVERY_MAX_AGE_S = 3600.0
JWKS_MAX_AGE_S = 3600.0
JWKS_MISS_REFETCH_S = 30.0
CONNECT_TIMEOUT_S = 5.0
REQUEST_TIMEOUT_S = 10.0
# Signatures by a key of the provider's set; never HS* (keyed with the client
# secret, which Sounding holds too) nor `none`.
ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
              "ES512", "EdDSA", "Ed25519")


class ProviderError(Exception):
    """The provider could not be reached, or answered what it should not (a 502)."""


class TokenRefused(Exception):
    """The provider's answer does not prove who logged in (a 401); the message names
    the check that failed."""


def pkce_pair() -> tuple[str, str]:
    """(code_verifier, S256 code_challenge)."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


class Provider:
    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self._metadata: dict[str, Any] | None = None
        self._metadata_at = 0.0
        self._keys: KeySet | None = None
        self._keys_at = 0.0
        self._miss_refetch_at = -JWKS_MISS_REFETCH_S
        self._lock = asyncio.Lock()

    @property
    def name(self) -> str:
        return self.settings.name

    async def _get_json(self, url: str, what: str) -> dict[str, Any]:
        request = HTTPRequest(url, connect_timeout=CONNECT_TIMEOUT_S,
                              request_timeout=REQUEST_TIMEOUT_S, follow_redirects=False,
                              headers={"Accept": "application/json"})
        try:
            response = await httppost.shared_client().fetch(request, raise_error=False)
        except OSError as exc:
            raise ProviderError(f"{self.name}: its {what} could not be fetched "
                                f"({type(exc).__name__})") from exc
        if response.code != 200:
            raise ProviderError(f"{self.name}: its {what} answered {response.code}")
        try:
            document = json.loads(response.body)
        except ValueError as exc:
            raise ProviderError(f"{self.name}: its {what} is not JSON") from exc
        if not isinstance(document, dict):
            raise ProviderError(f"{self.name}: its {what} is not a JSON object")
        return document

    async def metadata(self) -> dict[str, Any]:
        """The discovery document, fetched again once DISCOVERY_MAX_AGE_S old."""
        if self._metadata is None or time.monotonic() - self._metadata_at > DISCOVERY_MAX_AGE_S:
            url = self.settings.issuer.rstrip("/") + "/.well-known/openid-configuration"
            document = await self._get_json(url, "discovery document")
            # OpenID Connect Discovery 4.3: the issuer it names is the one configured.
            if document.get("issuer") != self.settings.issuer:
                raise ProviderError(f"{self.name}: its discovery document names the issuer "
                                    f"{document.get('issuer')!r}, not the configured one")
            for key in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
                if not isinstance(document.get(key), str):
                    raise ProviderError(f"{self.name}: its discovery document has no {key}")
            self._metadata, self._metadata_at = document, time.monotonic()
        return self._metadata

    async def authorization_url(self, redirect_uri: str, state: str, nonce: str,
                                challenge: str) -> str:
        endpoint = (await self.metadata())["authorization_endpoint"]
        query = urlencode({
            "response_type": "code", "client_id": self.settings.client_id,
            "redirect_uri": redirect_uri, "scope": " ".join(self.settings.scopes),
            "state": state, "nonce": nonce, "code_challenge": challenge,
            "code_challenge_method": "S256"})
        return endpoint + ("&" if "?" in endpoint else "?") + query

    async def end_session_url(self, post_logout_redirect_uri: str) -> str | None:
        """Where the browser ends its session at the provider (RP-Initiated Logout,
        with client_id rather than the ID token, which Sounding does not keep), or
        None for a provider without an end_session_endpoint (Google, Dex)."""
        try:
            endpoint = (await self.metadata()).get("end_session_endpoint")
        except ProviderError:
            return None  # the Sounding session has ended; the provider's is its own
        if not isinstance(endpoint, str):
            return None
        query = urlencode({"client_id": self.settings.client_id,
                           "post_logout_redirect_uri": post_logout_redirect_uri})
        return endpoint + ("&" if "?" in endpoint else "?") + query

    async def exchange(self, code: str, redirect_uri: str, verifier: str) -> str:
        """The ID token the token endpoint gives for `code`."""
        metadata = await self.metadata()
        form = {"grant_type": "authorization_code", "code": code,
                "redirect_uri": redirect_uri, "code_verifier": verifier}
        headers = {"Content-Type": "application/x-www-form-urlencoded",
                   "Accept": "application/json"}
        methods = metadata.get("token_endpoint_auth_methods_supported")
        if isinstance(methods, list) and "client_secret_basic" not in methods \
                and "client_secret_post" in methods:
            form.update(client_id=self.settings.client_id,
                        client_secret=self.settings.client_secret)
        else:
            # RFC 6749 2.3.1: each part form-encoded before the Basic encoding.
            pair = f"{quote(self.settings.client_id, safe='')}:" \
                   f"{quote(self.settings.client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        answer = await httppost.post(
            httppost.shared_client(), metadata["token_endpoint"], urlencode(form).encode(),
            headers, connect_timeout=CONNECT_TIMEOUT_S, request_timeout=REQUEST_TIMEOUT_S)
        if isinstance(answer, httppost.Unanswered):
            raise ProviderError(f"{self.name}: its token endpoint did not answer "
                                f"({answer.why})")
        try:
            document = json.loads(answer.body)
        except ValueError:
            document = None
        if not isinstance(document, dict):
            raise ProviderError(f"{self.name}: its token endpoint answered {answer.code}, "
                                "not JSON")
        if answer.code != 200:
            # The provider's own words (error, error_description) are no secret.
            raise TokenRefused(f"{self.name} refused the code: "
                               f"{document.get('error')}: {document.get('error_description')}")
        id_token = document.get("id_token")
        if not isinstance(id_token, str):
            raise ProviderError(f"{self.name}: its token endpoint gave no id_token")
        return id_token

    async def _key_set(self, kid: str | None) -> KeySet:
        """The provider's keys, with `kid` among them if a bounded refetch finds it."""
        # joserfc is imported here and in verify, at the first login through a
        # provider: with the parts of cryptography it loads (X.509 names, PEM) it cost
        # every collector start about 50 ms of CPU, single sign-on configured or not.
        from joserfc.errors import JoseError
        from joserfc.jwk import KeySet

        async with self._lock:
            now = time.monotonic()
            stale = self._keys is None or now - self._keys_at > JWKS_MAX_AGE_S
            missing = kid is not None and self._keys is not None \
                and all(key.kid != kid for key in self._keys)
            if missing and now - self._miss_refetch_at >= JWKS_MISS_REFETCH_S:
                self._miss_refetch_at = now
                stale = True
            if stale:
                document = await self._get_json((await self.metadata())["jwks_uri"], "JWKS")
                try:
                    self._keys = KeySet.import_key_set(document)  # type: ignore[arg-type]
                except (JoseError, KeyError, TypeError, ValueError) as exc:
                    raise ProviderError(f"{self.name}: its JWKS holds no usable key") from exc
                self._keys_at = now
            assert self._keys is not None
            return self._keys

    async def verify(self, id_token: str, nonce: str) -> dict[str, Any]:
        """The ID token's claims, once every check holds; TokenRefused otherwise."""
        from joserfc import jws, jwt  # here: see _key_set
        from joserfc.errors import JoseError

        try:
            header = jws.extract_compact(id_token.encode()).headers()
        except (JoseError, ValueError) as exc:
            raise TokenRefused("the ID token is not a signed JWT") from exc
        kid = header.get("kid")
        keys = await self._key_set(kid if isinstance(kid, str) else None)
        supported = (await self.metadata()).get("id_token_signing_alg_values_supported")
        allowed = [alg for alg in ASYMMETRIC
                   if not isinstance(supported, list) or alg in supported]
        try:
            token = jwt.decode(id_token, keys, algorithms=allowed)
        except JoseError as exc:
            # joserfc's error names are the check: bad_signature, invalid_key_id...
            raise TokenRefused(f"the ID token's signature does not verify against the "
                               f"provider's keys ({exc.error})") from exc
        claims = token.claims
        registry = jwt.JWTClaimsRegistry(
            leeway=CLOCK_SKEW_S,
            iss={"essential": True, "value": self.settings.issuer},
            aud={"essential": True, "value": self.settings.client_id},
            sub={"essential": True}, exp={"essential": True},
            nonce={"essential": True, "value": nonce})
        try:
            registry.validate(claims)
        except JoseError as exc:
            raise TokenRefused(f"the ID token was refused: {exc.description or exc.error}"
                               ) from exc
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != self.settings.client_id:
            raise TokenRefused("the ID token was refused: several audiences and another "
                               "authorized party (azp)")
        # OpenID Connect Core 2: at most 255 ASCII characters (user_identities' column).
        if not isinstance(claims["sub"], str) or len(claims["sub"]) > 255:
            raise TokenRefused("the ID token was refused: its sub is not a string of at "
                               "most 255 characters")
        return claims

    def role_of(self, claims: dict[str, Any]) -> Mapped | None:
        """The Sounding roles the role claim's values map to, or None for none."""
        return self.settings.role_of(claims)

    def email_of(self, claims: dict[str, Any]) -> tuple[str, bool]:
        """(email, verified) from the configured email claim."""
        value = claims.get(self.settings.email_claim)
        return (value if isinstance(value, str) else ""), claims.get("email_verified") is True
