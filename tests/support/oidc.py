"""A real OpenID Connect provider for tests: django-oauth-toolkit in its own process
(tests/support/oidc_provider), behind a small HTTP front in this process.

Every URL the provider publishes names the front, so the app, the test and the browser all
reach the provider through it: the front records what the provider was asked (the PKCE
challenge, the verifier) and can rewrite the token endpoint's answer (an id_token for
another client, a tampered one) or drop connections (a provider that is down).
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlparse

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.daphne import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
APP_CLIENT = ("chat-app", "chat-app-secret-" + "s" * 24)
OTHER_CLIENT = ("other-app", "other-app-secret-" + "o" * 24)
OTHER_REDIRECT = "http://127.0.0.1/other/callback/"
CALLBACK_PATH = "/accounts/oidc/callback/"


@dataclass(frozen=True)
class ProviderUser:
    username: str
    email: str
    password: str = "provider-password-1"
    groups: tuple[str, ...] = ()
    unverified: bool = False


ALICE = ProviderUser("alice", "alice@example.com", groups=("chat-users",))
BOB = ProviderUser("bob", "bob@elsewhere.test")
EVE = ProviderUser("eve", "eve@example.com", unverified=True)
CAROL = ProviderUser("carol", "carol@example.com", groups=("chat-users",))
USERS = (ALICE, BOB, EVE, CAROL)


@dataclass
class Front:
    """What the front saw, and what it does to the provider's answers."""

    target_port: int
    seen: list[tuple[str, str, bytes]] = field(default_factory=list)
    rewrite_token: Callable[[dict], dict] | None = None
    down: bool = False

    def reset(self) -> None:
        self.seen.clear()
        self.rewrite_token = None
        self.down = False

    def requests_to(self, path: str) -> list[tuple[str, str, bytes]]:
        return [entry for entry in self.seen if urlparse(entry[1]).path == path]


def _handler(front: Front) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if front.down:
                self.close_connection = True
                self.connection.close()  # the provider is gone: no answer at all
                return
            front.seen.append((self.command, self.path, body))
            upstream = http.client.HTTPConnection("127.0.0.1", front.target_port, timeout=30)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
            try:
                upstream.request(self.command, self.path, body=body or None, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
            except OSError:  # the provider is still starting
                self.send_error(502)
                return
            if front.rewrite_token and self.path.startswith("/o/token/") and answer.status == 200:
                data = json.dumps(front.rewrite_token(json.loads(data))).encode()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            upstream.close()

        do_GET = do_POST = _forward

    return Forward


@dataclass
class TestProvider:
    """The running provider: its discovery URL, our client, and a person's side of a sign-in."""

    base_url: str  # the front
    front: Front
    db_path: Path

    @property
    def issuer(self) -> str:
        return self.base_url + "/o"

    @property
    def discovery_url(self) -> str:
        return self.issuer + "/.well-known/openid-configuration/"

    client_id, client_secret = APP_CLIENT

    def authorize(self, authorize_url: str, user: ProviderUser) -> str:
        """Sign `user` in at the provider and follow `authorize_url`; return where the
        provider sends the browser back (the redirect URI with code and state)."""
        browser = requests.Session()
        answer = browser.get(authorize_url, allow_redirects=False, timeout=30)
        if answer.status_code == 302 and "/accounts/login/" in answer.headers["Location"]:
            login_url = urljoin(authorize_url, answer.headers["Location"])
            browser.get(login_url, timeout=30)
            answer = browser.post(
                login_url,
                data={
                    "username": user.username,
                    "password": user.password,
                    "csrfmiddlewaretoken": browser.cookies["provider_csrftoken"],
                },
                allow_redirects=False,
                timeout=30,
            )
            assert answer.status_code == 302, answer.text[:500]
            answer = browser.get(
                urljoin(login_url, answer.headers["Location"]), allow_redirects=False, timeout=30
            )
        assert answer.status_code == 302, answer.text[:500]
        return answer.headers["Location"]

    def tokens_for_other_client(self, *, nonce: str, user: ProviderUser) -> dict:
        """Return the token response the provider really gives another client (`nonce` in
        its id_token)."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
        query = {
            "response_type": "code",
            "client_id": OTHER_CLIENT[0],
            "redirect_uri": OTHER_REDIRECT,
            "scope": "openid email profile",
            "state": "other-state",
            "nonce": nonce,
            "code_challenge": challenge.rstrip(b"=").decode(),
            "code_challenge_method": "S256",
        }
        back = self.authorize(f"{self.issuer}/authorize/?{urlencode(query)}", user)
        code = parse_qs(urlparse(back).query)["code"][0]
        answer = requests.post(
            f"{self.issuer}/token/",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": OTHER_REDIRECT,
                "code_verifier": verifier,
            },
            auth=OTHER_CLIENT,
            timeout=30,
        )
        answer.raise_for_status()
        return answer.json()


def _private_key_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def _client(client: tuple[str, str], redirect_uris: list[str]) -> dict:
    return {"client_id": client[0], "client_secret": client[1], "redirect_uris": redirect_uris}


def _seed() -> dict:
    redirect_uris = [
        f"http://testserver{CALLBACK_PATH}",
        f"http://localhost{CALLBACK_PATH}",  # any port (ALLOW_LOCALHOST_LOOPBACK)
        f"http://127.0.0.1{CALLBACK_PATH}",
    ]
    users = [
        {
            "username": u.username,
            "email": u.email,
            "password": u.password,
            "groups": list(u.groups),
            "unverified": u.unverified,
        }
        for u in USERS
    ]
    clients = [_client(APP_CLIENT, redirect_uris), _client(OTHER_CLIENT, [OTHER_REDIRECT])]
    return {"clients": clients, "users": users}


@contextmanager
def run_provider(timeout: float = 120.0) -> Iterator[TestProvider]:
    """Start the provider process and its front; stop both afterwards."""
    workdir = Path(tempfile.mkdtemp(prefix="oidc-provider-"))
    front = Front(target_port=free_port())
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _handler(front))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    provider = TestProvider(
        base_url=f"http://127.0.0.1:{server.server_address[1]}", front=front, db_path=workdir
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.support.oidc_provider.settings",
        "OIDC_PROVIDER_DB": str(workdir / "provider.sqlite3"),
        "OIDC_PROVIDER_KEY": _private_key_pem(),
        "OIDC_PROVIDER_ISSUER": provider.issuer,
        "OIDC_PROVIDER_SEED": json.dumps(_seed()),
    }
    log = open(workdir / "provider.log", "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.oidc_provider.serve", str(front.target_port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_until_up(provider, process, timeout, workdir / "provider.log")
        yield provider
    finally:
        server.shutdown()
        server.server_close()
        stop([process])
        log.close()


def _wait_until_up(
    provider: TestProvider, process: subprocess.Popen, timeout: float, log: Path
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the OIDC provider exited: {log.read_text()[-2000:]}")
        try:
            if requests.get(provider.discovery_url, timeout=2).status_code == 200:
                provider.front.reset()
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise RuntimeError("the OIDC provider did not start in time")
