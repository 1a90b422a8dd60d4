"""Sign-ins and links: who may come in, the user a provider account is, unlinking."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from audit.models import AuditEntry
from audit.services import record
from core import rls

from .config import OidcConfig
from .models import SUBJECT_MAX_LENGTH, SsoLink
from .provider import Identity, SignInFailed

USERNAME_MAX_LENGTH = 150
# Django's username characters; anything else in the claim is dropped.
_NOT_USERNAME = re.compile(r"[^\w.@+-]")


def admit(config: OidcConfig, identity: Identity) -> None:
    """Refuse a provider account outside OIDC_ALLOWED_DOMAINS / OIDC_ALLOWED_GROUPS."""
    claims = identity.claims
    if len(identity.subject) > SUBJECT_MAX_LENGTH:
        raise SignInFailed("invalid")
    if config.allowed_domains:
        email = claims.get("email")
        domain = email.rpartition("@")[2].lower() if isinstance(email, str) else ""
        # A provider that says the address is unverified vouches for nothing.
        if domain not in config.allowed_domains or claims.get("email_verified") is False:
            raise SignInFailed("domain")
    if config.allowed_groups:
        groups = claims.get(config.groups_claim)
        groups = [groups] if isinstance(groups, str) else groups
        if not isinstance(groups, list) or not set(config.allowed_groups) & {
            g for g in groups if isinstance(g, str)
        }:
            raise SignInFailed("group")


def sign_in(config: OidcConfig, identity: Identity) -> Any:
    """Return the user linked to the provider account, linking a new user on first sign-in.

    The user is found by (issuer, subject) only, never by a username or an e-mail that
    matches: a local account is never taken over. Runs as maintenance (before the sign-in
    there is no user to scope by), for these two tables only.
    """
    with rls.maintenance():
        user = _linked_user(identity)
        if user is None:
            try:
                user = _link_new_user(config, identity)
            except IntegrityError:  # the same account's first sign-in in another tab won
                user = _linked_user(identity)
                if user is None:
                    raise SignInFailed("retry") from None
    if not user.is_active:
        raise SignInFailed("inactive")
    return user


def _linked_user(identity: Identity) -> Any | None:
    with transaction.atomic():
        link = (
            SsoLink.objects.select_for_update()
            .select_related("user")
            .filter(issuer=identity.issuer, subject=identity.subject)
            .first()
        )
        if link is None:
            return None
        link.last_login_at = timezone.now()
        link.save(update_fields=["last_login_at"])
        return link.user


@transaction.atomic
def _link_new_user(config: OidcConfig, identity: Identity) -> Any:
    claims = identity.claims
    email = claims.get("email") if isinstance(claims.get("email"), str) else ""
    user_model = get_user_model()
    user = user_model(username=_free_username(_wanted_username(config, claims)))
    user.email = email[:254] if "@" in email else ""
    user.set_unusable_password()  # signs in through the provider only
    user.save()
    link = SsoLink.objects.create(
        user=user,
        issuer=identity.issuer,
        subject=identity.subject,
        last_login_at=timezone.now(),
    )
    record(
        actor=user,
        action=AuditEntry.Action.SSO_LINKED,
        target=link,
        detail={"issuer": identity.issuer, "subject": identity.subject, "user": user.username},
    )
    return user


def _wanted_username(config: OidcConfig, claims: dict[str, Any]) -> str:
    """Return OIDC_USERNAME_CLAIM cleaned to Django's username characters (or a fallback),
    normalized as sign-up normalizes (NFKC): "ａｌｉｃｅ" is "alice", whose name is then
    taken, so the newcomer gets "alice-2", never a look-alike of an existing account."""
    for value in (claims.get(config.username_claim), claims.get("email")):
        if isinstance(value, str):
            value = get_user_model().normalize_username(value)
            cleaned = _NOT_USERNAME.sub("", value)[: USERNAME_MAX_LENGTH - 8]
            if cleaned:
                return cleaned
    return "user"


def _free_username(wanted: str) -> str:
    """Return `wanted`, or `wanted-2`, `-3`...: the first no account has (any letter case)."""
    users = get_user_model().objects
    candidate, n = wanted, 1
    while users.filter(username__iexact=candidate).exists():
        n += 1
        candidate = f"{wanted}-{n}"
    return candidate


@transaction.atomic
def unlink(*, actor: Any, link: SsoLink) -> None:
    """Remove `link` (staff in the admin): its user no longer signs in through the provider."""
    record(
        actor=actor,
        action=AuditEntry.Action.SSO_UNLINKED,
        target=link,
        detail={"issuer": link.issuer, "subject": link.subject, "user": link.user.username},
    )
    link.delete()
