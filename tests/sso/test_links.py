"""An SSO user's session on the API and a socket; staff removing a link (audited)."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model

from audit.models import AuditEntry
from conversations import services
from sso.models import SsoLink
from tests.realtime.conftest import open_socket, receive
from tests.support.oidc import ALICE

from .conftest import sign_in

User = get_user_model()


@pytest.mark.django_db(transaction=True)
def test_an_sso_users_session_works_on_the_api_and_a_websocket(client, provider, sso_settings):
    sign_in(client, provider, ALICE)
    user = User.objects.get(username="alice")
    conversation = services.create_conversation(user=user, title="Planning")

    listed = client.get("/api/v1/conversations").json()
    assert [c["title"] for c in listed["items"]] == ["Planning"]

    async def ping() -> dict:
        cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
        comm = open_socket(
            conversation.id, headers=[(b"cookie", cookie), (b"origin", b"http://testserver")]
        )
        assert (await comm.connect())[0]
        await comm.send_json_to({"type": "ping"})
        frame = await receive(comm)
        await comm.disconnect()
        return frame

    assert async_to_sync(ping)() == {"type": "pong"}


@pytest.mark.django_db
def test_staff_removing_a_link_in_the_admin_is_audited(client, provider, sso_settings, make_user):
    sign_in(client, provider, ALICE)
    link = SsoLink.objects.get()
    staff = make_user("root", is_staff=True, is_superuser=True)
    client.force_login(staff)

    page = client.get("/admin/sso/ssolink/")
    assert page.status_code == 200 and link.subject in page.content.decode()
    answer = client.post(f"/admin/sso/ssolink/{link.pk}/delete/", {"post": "yes"})

    assert answer.status_code == 302 and not SsoLink.objects.exists()
    assert User.objects.filter(username="alice").exists()  # the account stays; the link goes
    entry = AuditEntry.objects.get(action=AuditEntry.Action.SSO_UNLINKED)
    assert (entry.actor_id, entry.target_id) == (staff.pk, str(link.pk))
    assert entry.detail["subject"] == link.subject


@pytest.mark.django_db
def test_staff_removing_links_in_bulk_audits_each(client, provider, sso_settings, make_user):
    sign_in(client, provider, ALICE)
    staff = make_user("root", is_staff=True, is_superuser=True)
    client.force_login(staff)
    ids = [str(pk) for pk in SsoLink.objects.values_list("pk", flat=True)]

    client.post(
        "/admin/sso/ssolink/",
        {"action": "delete_selected", "_selected_action": ids, "post": "yes"},
    )

    assert not SsoLink.objects.exists()
    assert AuditEntry.objects.filter(action=AuditEntry.Action.SSO_UNLINKED).count() == len(ids)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("claimed", "given"),
    [("ａｌｉｃｅ", "alice-2"), ("ALICE", "ALICE-2"), ("ａｌｉｃｅ\u200b", "alice-2")],
)
def test_a_look_alike_username_is_normalized_and_never_takes_an_existing_name(
    claimed, given, django_user_model, settings
):
    from sso.config import current
    from sso.provider import Identity
    from sso.services import sign_in

    settings.OIDC_DISCOVERY_URL = "https://idp.test/.well-known/openid-configuration"
    settings.OIDC_CLIENT_ID = "chat"
    local = django_user_model.objects.create_user("alice", password="pw-local-123")
    identity = Identity("https://idp.test", f"sub-{claimed!r}", {"preferred_username": claimed})
    user = sign_in(current(), identity)
    assert user.pk != local.pk
    assert user.username == given  # the same name with a suffix, never a look-alike of it
