"""Single sign-on in the browser: the button, the provider's page, back in the app shell."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from sso.models import SsoLink
from tests.conftest import database_url_for_subprocesses
from tests.support.oidc import CAROL, run_provider

from .conftest import serve_daphne, watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def sso_site(django_db_setup, django_db_blocker, tmp_path_factory, browser):
    """Daphne configured for the test provider (its own process, behind the tests' front)."""
    with django_db_blocker.unblock():
        database_url = database_url_for_subprocesses()
    with (
        run_provider() as provider,
        serve_daphne(
            tmp_path_factory.mktemp("sso-server-var"),
            database_url,
            OIDC_DISCOVERY_URL=provider.discovery_url,
            OIDC_CLIENT_ID=provider.client_id,
            OIDC_CLIENT_SECRET=provider.client_secret,
            OIDC_PROVIDER_NAME="Test IdP",
        ) as url,
    ):
        yield url, provider


def test_the_sso_button_signs_in_at_the_provider_and_lands_in_the_app(
    sso_site, new_context, django_user_model, page_errors
):
    url, provider = sso_site
    page = new_context(base_url=url).new_page()
    watch(page, page_errors)
    page.goto("/accounts/login/")

    page.get_by_role("link", name="Sign in with Test IdP").click()
    expect(page.get_by_role("heading", name="Test identity provider")).to_be_visible()
    assert page.url.startswith(provider.base_url)
    page.get_by_label("Username").fill(CAROL.username)
    page.get_by_label("Password").fill(CAROL.password)
    page.get_by_role("button", name="Sign in at the provider").click()

    expect(page.get_by_text("What can I help with?")).to_be_visible()
    assert page.url == f"{url}/"
    expect(page.locator("body.signed-in")).to_have_count(1)
    user = django_user_model.objects.get(username="carol")
    assert SsoLink.objects.get(user=user).issuer == provider.issuer
    assert page_errors == {"errors": [], "dialogs": []}
