"""Signing in through a real OpenID Connect provider: code flow with PKCE, links, refusals."""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs, urlparse

import pytest
from django.contrib.auth import get_user_model

from audit.models import AuditEntry
from sso.models import SsoLink
from tests.support.oidc import ALICE, BOB, EVE

from .conftest import come_back, flash, sign_in, start_sign_in

pytestmark = pytest.mark.django_db

User = get_user_model()


def test_first_sign_in_creates_the_user_through_the_code_flow_with_pkce(
    client, provider, sso_settings
):
    answer = sign_in(client, provider, ALICE, next_url="/conversations/")

    assert answer.status_code == 302 and answer["Location"] == "/conversations/"
    user = User.objects.get(username="alice")
    assert client.get("/conversations/").status_code == 200  # logged in
    assert user.email == "alice@example.com" and not user.has_usable_password()
    link = SsoLink.objects.get(user=user)
    assert (link.issuer, link.subject) == (provider.issuer, link.subject) and link.subject
    # The provider was asked with a PKCE challenge (S256) and got the verifier back.
    (_, authorize, _), *_ = provider.front.requests_to("/o/authorize/")
    query = parse_qs(urlparse(authorize).query)
    assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) == 43
    assert query["nonce"] and query["state"] and query["scope"] == ["openid email profile"]
    ((_, _, token_body),) = provider.front.requests_to("/o/token/")
    assert b"code_verifier=" in token_body
    entry = AuditEntry.objects.get(action=AuditEntry.Action.SSO_LINKED)
    assert (entry.actor_id, entry.target_id) == (user.pk, str(link.pk))


def test_second_sign_in_reuses_the_account(client, provider, sso_settings):
    sign_in(client, provider, ALICE)
    first = User.objects.get(username="alice")
    client.logout()

    answer = sign_in(client, provider, ALICE)

    assert answer.status_code == 302
    assert User.objects.count() == 1 and SsoLink.objects.count() == 1
    assert int(client.session["_auth_user_id"]) == first.pk
    assert SsoLink.objects.get().last_login_at is not None
    assert AuditEntry.objects.filter(action=AuditEntry.Action.SSO_LINKED).count() == 1


def test_a_local_account_with_the_same_name_and_email_is_not_taken_over(
    client, provider, sso_settings, django_user_model
):
    local = django_user_model.objects.create_user("alice", "alice@example.com", "pw-local-123")

    sign_in(client, provider, ALICE)

    signed_in = User.objects.get(pk=int(client.session["_auth_user_id"]))
    assert signed_in.pk != local.pk and signed_in.username == "alice-2"
    assert not SsoLink.objects.filter(user=local).exists()


def test_the_username_comes_from_the_configured_claim(client, provider, sso_settings):
    sso_settings.OIDC_USERNAME_CLAIM = "email"

    sign_in(client, provider, ALICE)

    assert User.objects.get(pk=int(client.session["_auth_user_id"])).username == "alice@example.com"


def test_a_disabled_linked_user_is_refused(client, provider, sso_settings):
    sign_in(client, provider, ALICE)
    User.objects.filter(username="alice").update(is_active=False)
    client.logout()

    answer = sign_in(client, provider, ALICE)

    assert answer["Location"].startswith("/accounts/login/")
    assert "_auth_user_id" not in client.session
    assert flash(client) == ["This account is disabled."]
    assert User.objects.count() == 1  # no second account made for the same subject


def test_an_id_token_issued_to_another_client_is_refused(client, provider, sso_settings, caplog):
    authorize = start_sign_in(client)
    nonce = parse_qs(urlparse(authorize).query)["nonce"][0]
    back = provider.authorize(authorize, ALICE)
    # Real tokens, signed by the same provider, same user and nonce, its at_hash matching
    # its access token: issued to another client.
    foreign = provider.tokens_for_other_client(nonce=nonce, user=ALICE)
    claims = _claims(foreign["id_token"])
    assert claims["aud"] == "other-app" and claims["nonce"] == nonce
    provider.front.rewrite_token = lambda token: {**token, **foreign}

    answer = come_back(client, back)

    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")
    assert "_auth_user_id" not in client.session
    assert not User.objects.exists() and not SsoLink.objects.exists()
    assert flash(client) == ["The identity provider's answer could not be verified."]
    assert "'aud'" in caplog.text  # refused for its audience, not for anything else


def test_a_tampered_id_token_is_refused(client, provider, sso_settings):
    def tamper(token: dict) -> dict:
        header, _, signature = token["id_token"].split(".")
        claims = {**_claims(token["id_token"]), "sub": "1", "preferred_username": "admin"}
        forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
        return {**token, "id_token": f"{header}.{forged}.{signature}"}  # signature kept

    provider.front.rewrite_token = tamper
    answer = sign_in(client, provider, ALICE)

    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")
    assert not User.objects.exists() and "_auth_user_id" not in client.session
    assert flash(client) == ["The identity provider's answer could not be verified."]


def test_an_email_domain_not_allowed_is_refused(client, provider, sso_settings):
    sso_settings.OIDC_ALLOWED_DOMAINS = ["example.com"]

    sign_in(client, provider, BOB)  # bob@elsewhere.test

    assert not User.objects.exists() and "_auth_user_id" not in client.session
    assert flash(client) == ["Your e-mail address's domain may not sign in here."]
    sign_in(client, provider, ALICE)  # alice@example.com
    assert User.objects.filter(username="alice").exists()


def test_an_unverified_email_in_an_allowed_domain_is_refused(client, provider, sso_settings):
    sso_settings.OIDC_ALLOWED_DOMAINS = ["example.com"]

    sign_in(client, provider, EVE)  # eve@example.com, email_verified: false

    assert not User.objects.exists()


def test_only_members_of_an_allowed_group_sign_in(client, provider, sso_settings):
    sso_settings.OIDC_ALLOWED_GROUPS = ["chat-users"]

    sign_in(client, provider, BOB)
    assert not User.objects.exists()
    assert flash(client) == ["Your account is not in a group that may sign in here."]
    sign_in(client, provider, ALICE)
    assert User.objects.filter(username="alice").exists()


def test_a_callback_with_a_state_that_is_not_ours_is_refused(client, provider, sso_settings):
    back = provider.authorize(start_sign_in(client), ALICE)
    forged = back.replace("state=", "state=x")

    answer = come_back(client, forged)

    assert answer.status_code == 302 and not User.objects.exists()
    assert not provider.front.requests_to("/o/token/")  # the code was never exchanged
    assert flash(client) == ["The sign-in expired or was started elsewhere. Please try again."]


def test_an_error_from_the_provider_is_shown_not_raised(client, provider, sso_settings):
    authorize = start_sign_in(client)
    state = parse_qs(urlparse(authorize).query)["state"][0]

    answer = client.get("/accounts/oidc/callback/", {"error": "access_denied", "state": state})

    assert answer.status_code == 302 and not User.objects.exists()
    assert flash(client) == ["The identity provider did not sign you in. Please try again."]


def test_a_provider_that_is_down_is_a_message_not_a_500(client, provider, sso_settings):
    back = provider.authorize(start_sign_in(client), ALICE)
    provider.front.down = True

    answer = come_back(client, back)  # the token exchange cannot reach it

    assert answer.status_code == 302 and not User.objects.exists()
    assert flash(client) == ["The identity provider could not be reached. Please try again later."]
    answer = client.get("/accounts/oidc/login/")  # nor can discovery, afresh
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")


def test_a_next_outside_the_site_is_not_followed(client, provider, sso_settings):
    answer = sign_in(client, provider, ALICE, next_url="https://evil.example/steal")

    assert answer.status_code == 302 and answer["Location"] == "/"


def test_sign_out_ends_the_app_session(client, provider, sso_settings):
    sign_in(client, provider, ALICE)
    assert client.get("/conversations/").status_code == 200

    client.post("/accounts/logout/")

    assert client.get("/conversations/").status_code == 302  # to the login page


def _claims(id_token: str) -> dict:
    payload = id_token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
