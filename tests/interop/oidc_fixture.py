"""A real OpenID Connect provider for tests: tests/oidc/server.mjs (panva's oidc-provider, two
issuers sharing one RS256 key), and a scripted browser that gets tokens from it.

Standard library only (urllib with a cookie jar), so any python3 can use it.

    provider = OidcProvider()           # installs the pinned npm packages on first use
    token = access_token(provider.issuer, "alice", "http://127.0.0.1:9999/mcp")
    wrong_iss = access_token(provider.other_issuer, "alice", "http://127.0.0.1:9999/mcp")
    provider.stop()

Clients (see the comment at the top of tests/oidc/server.mjs): public `test-client`,
`expiring-client` (access tokens live 2 s), `opaque-client` (opaque access tokens, for
introspection); confidential `grantry` (secret `grantry-secret`), whose redirect URI may be
http://127.0.0.1:<any port>/login/callback.
"""

from __future__ import annotations

import base64
import hashlib
import http.cookiejar
import json
import os
import re
import secrets
import select
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import leaks

OIDC_DIR = Path(__file__).resolve().parents[1] / "oidc"
TEST_REDIRECT_URI = "http://127.0.0.1/callback"
GRANTRY_CLIENT_ID = "grantry"
GRANTRY_CLIENT_SECRET = "grantry-secret"


class OidcError(RuntimeError):
    """The provider answered with an OAuth error, or the flow did not go as expected."""


def install() -> Path:
    """Installs the pinned packages (tests/oidc/install) and links their node_modules beside
    server.mjs, where Node's ESM resolution looks. Returns the folder holding node_modules."""
    out = subprocess.run(
        [str(OIDC_DIR / "install")], check=True, stdout=subprocess.PIPE, text=True
    ).stdout
    deps = Path(out.strip().splitlines()[-1])
    link = OIDC_DIR / "node_modules"
    target = deps / "node_modules"
    if not (link.is_symlink() and Path(os.readlink(link)) == target):
        tmp = OIDC_DIR / f".node_modules.{os.getpid()}"
        if tmp.is_symlink():
            tmp.unlink()
        os.symlink(target, tmp)
        os.replace(tmp, link)
    return deps


class OidcProvider:
    """`node tests/oidc/server.mjs` with the pinned Node 24, started and ready.

    .issuer and .other_issuer are the two issuer URLs (no trailing slash); .log() is the
    server's stderr (until .stop(), which ends the server and removes the log). Also a context
    manager."""

    def __init__(self, timeout: float = 30.0):
        deps = install()
        node = deps / "node_modules" / ".bin" / "node"
        self.log_path = Path(tempfile.mkstemp(prefix="oidc-provider-", suffix=".log")[1])
        self._log_file = open(self.log_path, "wb")
        started = time.monotonic()
        self.process = subprocess.Popen(
            [str(node), str(OIDC_DIR / "server.mjs")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
        )
        line = b""
        deadline = started + timeout
        while not line.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(remaining, 0))
            chunk = os.read(self.process.stdout.fileno(), 4096) if ready else b""
            if not chunk:
                why = "timed out" if not ready else "exited"
                log = self.log()
                self.stop()
                raise OidcError(f"the OIDC provider {why} before it was ready:\n{log}")
            line += chunk
        self.startup_seconds = time.monotonic() - started
        ready_line = json.loads(line)
        self.issuer: str = ready_line["issuer"]
        self.other_issuer: str = ready_line["other_issuer"]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stats(self) -> dict:
        """GET /test/stats: token and introspection request counts per issuer."""
        with urllib.request.urlopen(f"{self.issuer}/test/stats", timeout=10) as resp:
            return json.load(resp)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        self._log_file.close()
        self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> "OidcProvider":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class _NoRaise(urllib.request.HTTPErrorProcessor):
    """Hands back every response as it is: no exception for 4xx/5xx, no redirect followed."""

    def http_response(self, request, response):
        return response

    https_response = http_response


class Browser:
    """A cookie jar and a user agent that follows redirects only when told to."""

    def __init__(self):
        self.jar = http.cookiejar.CookieJar()
        self._opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRaise()
        )

    def request(self, url: str, data: dict | None = None, headers: dict | None = None):
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        req = urllib.request.Request(url, data=body, headers=headers or {})
        with self._opener.open(req, timeout=10) as resp:
            return resp.status, resp.headers, resp.read().decode("utf-8", "replace")


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    return verifier, challenge.decode()


def authorize(
    issuer: str,
    user: str,
    *,
    client_id: str = "test-client",
    redirect_uri: str = TEST_REDIRECT_URI,
    scope: str = "openid invoices",
    resource: str | None = None,
    login_hint: bool = True,
    extra: dict | None = None,
    browser: Browser | None = None,
) -> dict:
    """Runs the authorization request to its redirect back to `redirect_uri`, signing in as
    `user` (by login_hint, or by the HTML form when login_hint=False). Returns the redirect's
    query parameters plus "code_verifier", "state" and "redirect_uri"."""
    browser = browser or Browser()
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(12)
    params = {
        "client_id": client_id,
        "response_type": "code",
        "redirect_uri": redirect_uri,
        "scope": scope,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": state,
    }
    if resource is not None:
        params["resource"] = resource
    if login_hint:
        params["login_hint"] = user
    params.update(extra or {})
    url = f"{issuer}/auth?{urllib.parse.urlencode(params)}"
    data = None
    for _ in range(12):
        status, headers, body = browser.request(url, data)
        data = None
        if status in (301, 302, 303, 307, 308):
            url = urllib.parse.urljoin(url, headers["Location"])
            if url.startswith(redirect_uri):
                query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
                if "error" in query:
                    raise OidcError(f"{query['error']}: {query.get('error_description', '')}")
                if query.get("state") != state:
                    raise OidcError(f"state mismatch in {url}")
                if query.get("iss") != issuer:
                    raise OidcError(f"iss {query.get('iss')!r} in the redirect is not {issuer}")
                return {**query, "code_verifier": verifier, "redirect_uri": redirect_uri}
            continue
        form = re.search(r'<form method="post" action="([^"]+/login)"', body)
        if status == 200 and form:
            url = urllib.parse.urljoin(url, form.group(1))
            data = {"login": user}
            continue
        raise OidcError(f"unexpected {status} at {url}:\n{body[:2000]}")
    raise OidcError("too many redirects")


def redeem(
    issuer: str,
    code: str,
    code_verifier: str,
    *,
    client_id: str = "test-client",
    client_secret: str | None = None,
    redirect_uri: str = TEST_REDIRECT_URI,
    resource: str | None = None,
) -> dict:
    """POST <issuer>/token with the authorization code; a client_secret is sent by HTTP basic
    auth, otherwise client_id goes in the body (public client). Returns the JSON answer."""
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": code_verifier,
    }
    headers = {}
    if client_secret is None:
        data["client_id"] = client_id
    else:
        basic = f"{urllib.parse.quote(client_id, safe='')}:{urllib.parse.quote(client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(basic.encode()).decode()
    if resource is not None:
        data["resource"] = resource
    status, _, body = Browser().request(f"{issuer}/token", data, headers)
    if status != 200:
        raise OidcError(f"token endpoint answered {status}: {body}")
    return json.loads(body)


def access_token(
    issuer: str,
    user: str,
    resource: str,
    client_id: str = "test-client",
    scope: str = "openid invoices",
) -> str:
    """An access token for `user` at `resource` from `issuer`, by authorization code + PKCE
    with a public client: a JWT (aud = resource), or opaque for client_id="opaque-client"."""
    result = authorize(issuer, user, client_id=client_id, scope=scope, resource=resource)
    tokens = redeem(
        issuer, result["code"], result["code_verifier"], client_id=client_id, resource=resource
    )
    leaks.record("bearer token", [tokens["access_token"], tokens.get("refresh_token")])
    return tokens["access_token"]


def introspect(issuer: str, token: str, client_id: str = GRANTRY_CLIENT_ID,
               client_secret: str = GRANTRY_CLIENT_SECRET) -> dict:
    """RFC 7662 introspection as the confidential `grantry` client."""
    basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
    status, _, body = Browser().request(
        f"{issuer}/token/introspection", {"token": token}, {"Authorization": f"Basic {basic}"}
    )
    if status != 200:
        raise OidcError(f"introspection endpoint answered {status}: {body}")
    return json.loads(body)


def decode_jwt(token: str) -> tuple[dict, dict]:
    """(header, payload) of a JWS compact token, NOT verified."""

    def part(segment: str) -> dict:
        return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))

    header, payload, _ = token.split(".")
    return part(header), part(payload)
