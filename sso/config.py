"""The single sign-on settings, read once per use from Django's settings (tests override them)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class OidcConfig:
    discovery_url: str
    client_id: str
    client_secret: str
    username_claim: str
    allowed_domains: tuple[str, ...]
    allowed_groups: tuple[str, ...]
    groups_claim: str
    provider_name: str
    only: bool
    timeout: float


def current() -> OidcConfig | None:
    """Return the provider's settings, or None when single sign-on is not configured."""
    if not (settings.OIDC_DISCOVERY_URL and settings.OIDC_CLIENT_ID):
        return None
    return OidcConfig(
        discovery_url=settings.OIDC_DISCOVERY_URL,
        client_id=settings.OIDC_CLIENT_ID,
        client_secret=settings.OIDC_CLIENT_SECRET,
        username_claim=settings.OIDC_USERNAME_CLAIM or "preferred_username",
        allowed_domains=tuple(d.lower() for d in settings.OIDC_ALLOWED_DOMAINS),
        allowed_groups=tuple(settings.OIDC_ALLOWED_GROUPS),
        groups_claim=settings.OIDC_GROUPS_CLAIM or "groups",
        provider_name=settings.OIDC_PROVIDER_NAME,
        only=bool(settings.OIDC_ONLY),
        timeout=float(settings.OIDC_TIMEOUT),
    )


def sso_only() -> bool:
    """Is password login off (OIDC_ONLY with a provider configured)?"""
    config = current()
    return config is not None and config.only
