"""API tokens: create (the secret once), list, revoke, and authenticate a Bearer header."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext as _
from ninja.security import HttpBearer

from core import rls, rows
from core.errors import Invalid, NotFound
from core.redact import TOKEN_PREFIX

from .models import ApiToken

NAME_MAX_LENGTH = 100
# Writing last_used_at on every request would turn each read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    secret: str  # shown once, never stored


def hash_secret(secret: str) -> str:
    """Hash a token secret (high-entropy, so one SHA-256 suffices)."""
    return hashlib.sha256(secret.encode()).hexdigest()


@transaction.atomic
def create_api_token(*, user: Any, name: str) -> IssuedToken:
    """Create a token for `user`; the returned secret is never stored."""
    name = " ".join(str(name or "").split())
    if not name:
        raise Invalid(_("Give the token a name."))
    if len(name) > NAME_MAX_LENGTH:
        raise Invalid(_("Name is longer than %(n)s characters.") % {"n": NAME_MAX_LENGTH})
    prefix = secrets.token_hex(4)
    secret = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    token = ApiToken.objects.create(
        owner=user, name=name, prefix=prefix, token_hash=hash_secret(secret)
    )
    return IssuedToken(token=token, secret=secret)


def list_api_tokens(*, user: Any) -> list[ApiToken]:
    """Return the user's tokens, newest first."""
    return list(ApiToken.objects.filter(owner=user))


@transaction.atomic
def revoke_api_token(*, user: Any, token_id: Any) -> ApiToken:
    """Revoke one of the user's tokens; someone else's is not found."""
    try:
        token = ApiToken.objects.select_for_update().get(pk=int(token_id), owner=user)
    except (ApiToken.DoesNotExist, TypeError, ValueError):
        raise NotFound(_("Token not found.")) from None
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def parse_bearer(header: str | bytes | None) -> str | None:
    """Return the secret of an `Authorization: Bearer <secret>` value, else None."""
    if isinstance(header, bytes):
        header = header.decode("latin-1")
    if not header:
        return None
    scheme, _, secret = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        return None
    return secret.strip()


def authenticate_bearer(header: str | bytes | None) -> Any | None:
    """Return the active user a Bearer header names, or None; note when it was used."""
    token = authenticate_token(header)
    return token.owner if token is not None else None


def authenticate_token(header: str | bytes | None) -> ApiToken | None:
    """Return the live token (with its active owner) a Bearer header names, or None."""
    secret = parse_bearer(header)
    if not secret or not secret.startswith(TOKEN_PREFIX):
        return None
    prefix = secret[len(TOKEN_PREFIX) :].split("_", 1)[0]
    digest = hash_secret(secret)
    # Before this there is no user: the database shows the one token with this hash.
    with rls.bearer(digest):
        # Every socket opened with a token asks: two short statements (core/rows.py).
        token = rows.fetch(ApiToken, _TOKEN_SQL, [prefix])
        if token is None or not secrets.compare_digest(token.token_hash, digest):
            return None
        owner = rows.fetch(User, _OWNER_SQL, [token.owner_id])
        if owner is None or not owner.is_active:
            return None
        token.owner = owner
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


User = get_user_model()
_TOKEN_SQL = f"SELECT * FROM {ApiToken._meta.db_table} WHERE prefix = %s AND revoked_at IS NULL"
_OWNER_SQL = f"SELECT * FROM {User._meta.db_table} WHERE id = %s"


def live_token_ids(token_ids: set[int]) -> set[int]:
    """Return which of `token_ids` are still valid (not revoked, owner active)."""
    if not token_ids:
        return set()
    ids = list(token_ids)
    marks = ", ".join(["%s"] * len(ids))
    sql = _LIVE_SQL.format(tokens=ApiToken._meta.db_table, users=User._meta.db_table, ids=marks)
    return set(rows.column(sql, ids))


# Asked before every message a token's socket sends (a revoked token stops at once).
_LIVE_SQL = """SELECT t.id FROM {tokens} t JOIN {users} u ON u.id = t.owner_id
WHERE t.id IN ({ids}) AND t.revoked_at IS NULL AND u.is_active"""


class BearerAuth(HttpBearer):
    """`Authorization: Bearer <token>` with an API token (no CSRF: no cookie involved)."""

    def __call__(self, request: HttpRequest) -> Any | None:
        # Not HttpBearer's own parsing: with DEBUG on it logs a malformed header whole,
        # secret included. A header that is not a Bearer token is simply not ours.
        secret = parse_bearer(request.headers.get(self.header))
        return self.authenticate(request, secret) if secret else None

    def authenticate(self, request: HttpRequest, token: str) -> Any | None:
        if hasattr(request, "api_token"):  # the RLS middleware looked it up already
            found = request.api_token
            return found.owner if found is not None else None
        return authenticate_bearer(f"Bearer {token}")
