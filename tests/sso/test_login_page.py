"""The login page with and without single sign-on, and what OIDC_ONLY turns off."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests.support.oidc import ALICE

from .conftest import flash, sign_in

pytestmark = pytest.mark.django_db

User = get_user_model()
PASSWORD = "pw-for-tests-123"


def test_without_configuration_password_login_is_as_before_and_no_button(client, make_user):
    make_user("dana")

    page = client.get("/accounts/login/").content.decode()
    assert "Sign in with" not in page and 'name="password"' in page
    answer = client.post("/accounts/login/", {"username": "dana", "password": PASSWORD})
    assert answer.status_code == 302 and "_auth_user_id" in client.session
    client.logout()
    assert client.get("/accounts/oidc/login/").status_code == 404
    assert client.get("/accounts/oidc/callback/", {"code": "x", "state": "y"}).status_code == 404


def test_configured_login_page_offers_the_button_beside_the_password_form(client, sso_settings):
    page = client.get("/accounts/login/", {"next": "/documents/"}).content.decode()

    assert "Sign in with Test IdP" in page
    assert 'href="/accounts/oidc/login/?next=%2Fdocuments%2F"' in page
    assert 'name="password"' in page and "/accounts/signup/" in page


def test_the_button_is_in_korean_on_a_korean_page(client, sso_settings):
    page = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="ko").content.decode()

    assert "Test IdP(으)로 로그인" in page


def test_sso_only_hides_the_password_form_and_refuses_a_password_post(
    client, sso_settings, make_user
):
    sso_settings.OIDC_ONLY = True
    make_user("dana")

    page = client.get("/accounts/login/").content.decode()
    assert "Sign in with Test IdP" in page
    assert 'name="password"' not in page and "/accounts/signup/" not in page
    answer = client.post("/accounts/login/", {"username": "dana", "password": PASSWORD})
    assert answer.status_code == 403 and "_auth_user_id" not in client.session
    assert "Password login is off" in answer.content.decode()


def test_sso_only_turns_sign_up_off(client, sso_settings):
    sso_settings.OIDC_ONLY = True

    answer = client.post(
        "/accounts/signup/",
        {"username": "mallory", "password1": "a-long-pass-123", "password2": "a-long-pass-123"},
    )

    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/"
    assert not User.objects.filter(username="mallory").exists()
    assert flash(client) == ["Sign-up is off: sign in with single sign-on."]


def test_sso_only_sends_the_admin_login_to_the_sign_in_page(client, sso_settings, make_user):
    sso_settings.OIDC_ONLY = True
    make_user("root", is_staff=True, is_superuser=True)

    answer = client.get("/admin/login/", {"next": "/admin/"})
    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/?next=%2Fadmin%2F"
    answer = client.post("/admin/login/", {"username": "root", "password": PASSWORD})
    assert answer.status_code == 302 and "_auth_user_id" not in client.session


def test_sso_only_still_signs_in_through_the_provider(client, provider, sso_settings):
    sso_settings.OIDC_ONLY = True

    answer = sign_in(client, provider, ALICE)

    assert answer.status_code == 302 and answer["Location"] == "/"
    assert client.get("/").status_code == 200
