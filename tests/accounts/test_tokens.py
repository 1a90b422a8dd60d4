from __future__ import annotations

import re

import pytest

from accounts.models import ApiToken
from accounts.tokens import authenticate_bearer, create_api_token, revoke_api_token
from core.errors import Invalid, NotFound

pytestmark = pytest.mark.django_db


def test_token_page_shows_the_secret_once(alice_client, alice):
    response = alice_client.post("/settings/tokens/", {"name": "laptop"})
    assert response.status_code == 200
    secret = re.search(r'id="new-token">([^<]+)<', response.text).group(1)
    assert authenticate_bearer(f"Bearer {secret}") == alice
    again = alice_client.get("/settings/tokens/")
    assert secret not in again.text
    assert "laptop" in again.text
    token = ApiToken.objects.get()
    assert secret not in (token.token_hash, token.prefix)


def test_bearer_token_authenticates_and_records_use(alice):
    issued = create_api_token(user=alice, name="cli")
    assert issued.token.last_used_at is None
    assert authenticate_bearer(f"Bearer {issued.secret}") == alice
    issued.token.refresh_from_db()
    assert issued.token.last_used_at is not None


@pytest.mark.parametrize(
    "header",
    [None, "", "Bearer", "Basic abc", "Bearer cht_nope_nope", "Bearer not-a-token"],
)
def test_bad_bearer_headers_authenticate_nobody(alice, header):
    create_api_token(user=alice, name="cli")
    assert authenticate_bearer(header) is None


def test_tampered_secret_is_refused(alice):
    issued = create_api_token(user=alice, name="cli")
    assert authenticate_bearer(f"Bearer {issued.secret[:-2]}xx") is None


def test_revoked_token_no_longer_works(alice_client, alice):
    issued = create_api_token(user=alice, name="old")
    response = alice_client.post(f"/settings/tokens/{issued.token.pk}/revoke/")
    assert response.status_code == 302
    assert authenticate_bearer(f"Bearer {issued.secret}") is None


def test_someone_elses_token_cannot_be_revoked(alice, bob, bob_client):
    issued = create_api_token(user=alice, name="mine")
    with pytest.raises(NotFound):
        revoke_api_token(user=bob, token_id=issued.token.pk)
    assert bob_client.post(f"/settings/tokens/{issued.token.pk}/revoke/").status_code == 404
    assert authenticate_bearer(f"Bearer {issued.secret}") == alice


def test_token_needs_a_name(alice):
    with pytest.raises(Invalid):
        create_api_token(user=alice, name="   ")
