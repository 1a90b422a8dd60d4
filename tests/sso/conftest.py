"""The real OpenID Connect provider the single sign-on tests sign in through."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from tests.support.oidc import ProviderUser, TestProvider, run_provider


@pytest.fixture(scope="session")
def oidc_provider():
    """django-oauth-toolkit's OpenID Connect provider in its own process (never skipped)."""
    with run_provider() as provider:
        yield provider


@pytest.fixture
def provider(oidc_provider: TestProvider) -> TestProvider:
    oidc_provider.front.reset()
    yield oidc_provider
    oidc_provider.front.reset()


@pytest.fixture
def sso_settings(settings, provider: TestProvider):
    """The app configured for the test provider (password login still on)."""
    settings.OIDC_DISCOVERY_URL = provider.discovery_url
    settings.OIDC_CLIENT_ID = provider.client_id
    settings.OIDC_CLIENT_SECRET = provider.client_secret
    settings.OIDC_PROVIDER_NAME = "Test IdP"
    return settings


def start_sign_in(client, next_url: str | None = None) -> str:
    """Press the button: return the provider's authorization URL the app redirects to."""
    query = {"next": next_url} if next_url else {}
    answer = client.get("/accounts/oidc/login/", query)
    assert answer.status_code == 302, answer.content[:300]
    return answer["Location"]


def come_back(client, location: str):
    """Follow the provider's redirect back to the app's callback."""
    back = urlparse(location)
    assert back.path == "/accounts/oidc/callback/"
    return client.get(back.path, parse_qs(back.query))


def sign_in(client, provider: TestProvider, user: ProviderUser, next_url: str | None = None):
    """Sign in through the provider; return the callback's answer."""
    return come_back(client, provider.authorize(start_sign_in(client, next_url), user))


def flash(client) -> list[str]:
    """The messages the login page shows now."""
    page = client.get("/accounts/login/")
    return [str(m) for m in page.context["messages"]]
