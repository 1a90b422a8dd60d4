"""Talking to the OpenID Connect provider through Authlib: the redirect out and the code back.

Authlib reads the discovery document, makes the PKCE pair (S256), the state and the nonce
(kept in the session under the state), exchanges the code and checks the id_token: its
signature against the provider's JWKS, `iss` (the discovery document's issuer), `aud` (our
client id), `exp` and `nonce`. Nothing here touches the database.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import requests
from authlib.integrations.base_client import OAuthError
from authlib.integrations.django_client import OAuth
from django.http import HttpRequest
from joserfc.errors import JoseError

from .config import OidcConfig

log = logging.getLogger(__name__)

SCOPES = "openid email profile"
# The discovery document (and the keys) are read again after this long, or after the provider
# could not be reached: a provider that moved an endpoint is followed without a restart.
METADATA_MAX_AGE = 3600.0


class SignInFailed(Exception):
    """The provider's answer cannot sign anybody in; `reason` picks the message shown."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Identity:
    """Who the provider says signed in: the id_token's checked claims."""

    issuer: str
    subject: str
    claims: dict[str, Any]


_clients: dict[OidcConfig, tuple[float, Any]] = {}
_lock = threading.Lock()


def _client(config: OidcConfig) -> Any:
    """Return the Authlib client for `config` (its discovery document cached a while)."""
    with _lock:
        made, client = _clients.get(config, (0.0, None))
        if client is None or time.monotonic() - made > METADATA_MAX_AGE:
            oauth = OAuth()
            client = oauth.register(
                name="oidc",
                server_metadata_url=config.discovery_url,
                client_id=config.client_id,
                client_secret=config.client_secret or None,
                client_kwargs={
                    "scope": SCOPES,
                    "code_challenge_method": "S256",
                    "default_timeout": config.timeout,
                    # A public client (no secret) proves itself with PKCE alone.
                    "token_endpoint_auth_method": (
                        "client_secret_basic" if config.client_secret else "none"
                    ),
                },
            )
            _clients[config] = (time.monotonic(), client)
        return client


def _forget(config: OidcConfig) -> None:
    with _lock:
        _clients.pop(config, None)


def start(config: OidcConfig, request: HttpRequest, *, redirect_uri: str, next_url: str) -> str:
    """Keep state, nonce and PKCE verifier (and where to go after) in the session; return
    the provider's authorization URL."""
    client = _client(config)
    try:
        found = client.create_authorization_url(redirect_uri)
    except (requests.RequestException, ValueError, RuntimeError) as exc:
        _forget(config)
        log.warning("OIDC discovery failed: %s", exc)
        raise SignInFailed("unreachable") from exc
    client.save_authorize_data(request, redirect_uri=redirect_uri, next=next_url, **found)
    return found["url"]


def pending_next(config: OidcConfig, request: HttpRequest) -> str | None:
    """Return where the sign-in that `request` answers was to go (None: unknown state)."""
    client = _client(config)
    data = client.framework.get_state_data(request.session, request.GET.get("state"))
    return (data or {}).get("next")


def finish(config: OidcConfig, request: HttpRequest) -> Identity:
    """Exchange the code in `request` and check the id_token; return who signed in."""
    client = _client(config)
    try:
        token = client.authorize_access_token(request, claims_options=_claims_options(client))
    except OAuthError as exc:  # the provider's error, or a state that is not ours
        log.info("OIDC sign-in refused: %s", exc)
        reason = "state" if exc.error == "mismatching_state" else "provider"
        raise SignInFailed(reason) from exc
    except requests.RequestException as exc:
        _forget(config)
        log.warning("OIDC provider unreachable: %s", exc)
        raise SignInFailed("unreachable") from exc
    except (JoseError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        log.warning("OIDC id_token refused: %r", exc)
        raise SignInFailed("invalid") from exc
    claims = token.get("userinfo")  # the id_token's claims, checked; absent without one
    if not claims or not isinstance(claims.get("sub"), str) or not claims["sub"]:
        log.warning("OIDC token response without a usable id_token")
        raise SignInFailed("invalid")
    return Identity(issuer=str(claims["iss"]), subject=claims["sub"], claims=dict(claims))


def _claims_options(client: Any) -> dict[str, Any]:
    """Require `iss` to be the discovery document's issuer and `aud` to name us.

    Authlib checks `iss` by default but `aud` only through `azp`: a token for another
    client that names us as `azp` would pass, so the audience is required explicitly.
    """
    issuer = client.load_server_metadata().get("issuer")
    if not issuer:
        raise SignInFailed("invalid")
    return {
        "iss": {"essential": True, "value": issuer},
        "aud": {"essential": True, "value": client.client_id},
    }
