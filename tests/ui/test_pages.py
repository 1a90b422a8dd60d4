from __future__ import annotations

import pytest

from conversations import services
from tests.support import seed

pytestmark = pytest.mark.django_db


def _conversation_with_messages(user, n: int, title: str = "Long"):
    conversation = services.create_conversation(user=user, title=title)
    for i in range(1, n + 1):
        role = "user" if i % 2 else "assistant"
        seed.add_message(conversation_id=conversation.id, role=role, content=f"msg {i}")
    return conversation


def test_conversation_page_shows_the_latest_50_messages(alice_client, alice):
    conversation = _conversation_with_messages(alice, 60)
    html = alice_client.get(f"/conversations/{conversation.id}/").text
    assert 'data-seq="11"' in html and 'data-seq="60"' in html
    assert 'data-seq="10"' not in html
    assert 'id="older"' in html and 'id="older" hidden' not in html


def test_older_messages_fragment_pages_backwards(alice_client, alice):
    conversation = _conversation_with_messages(alice, 60)
    response = alice_client.get(f"/conversations/{conversation.id}/messages/fragment/?before=11")
    assert response.status_code == 200
    assert 'data-seq="1"' in response.text and 'data-seq="10"' in response.text
    assert 'data-seq="11"' not in response.text
    assert response["X-Has-Older"] == "0"


def test_jumping_to_an_old_message_loads_from_it(alice_client, alice):
    conversation = _conversation_with_messages(alice, 60)
    html = alice_client.get(f"/conversations/{conversation.id}/?at=3").text
    assert 'data-seq="3"' in html and 'data-seq="60"' in html


def test_message_fragment_renders_one_sanitized_message(alice_client, alice):
    conversation = services.create_conversation(user=alice)
    message = seed.add_message(
        conversation_id=conversation.id, role="assistant", content="**hi** <script>x()</script>"
    )
    url = f"/conversations/{conversation.id}/messages/{message.id}/fragment/"
    html = alice_client.get(url).text
    assert "<strong>hi</strong>" in html
    assert "<script>x()" not in html


def test_message_fragment_of_someone_elses_message_is_404(bob_client, alice):
    conversation = services.create_conversation(user=alice)
    message = seed.add_message(conversation_id=conversation.id, role="user", content="mine")
    url = f"/conversations/{conversation.id}/messages/{message.id}/fragment/"
    assert bob_client.get(url).status_code == 404
    assert (
        bob_client.get(f"/conversations/{conversation.id}/messages/fragment/?before=5").status_code
        == 404
    )


def test_list_search_shows_highlighted_korean_hits(alice_client, alice):
    conversation = services.create_conversation(user=alice, title="일정")
    seed.add_message(conversation_id=conversation.id, role="user", content="내일 회의가 있어요")
    html = alice_client.get("/conversations/", {"q": "회의"}).text
    assert "<mark>회의</mark>" in html
    assert f"/conversations/{conversation.id}/?at=1&amp;m=" in html


def test_list_filters_by_status(alice_client, alice):
    services.create_conversation(user=alice, title="Still going")
    archived = services.create_conversation(user=alice, title="Old stuff")
    services.archive_conversation(conversation=archived)
    html = alice_client.get("/conversations/", {"status": "archived"}).text
    rows = html.split('id="conversation-rows"')[1]
    assert "Old stuff" in rows and "Still going" not in rows


def test_rows_fragment_carries_the_next_cursor(alice_client, alice):
    for n in range(55):
        services.create_conversation(user=alice, title=f"c{n}")
    response = alice_client.get("/conversations/", {"fragment": "rows"})
    assert response.text.count('class="row-item') == 50
    assert response["X-Next-Cursor"]
    more = alice_client.get(
        "/conversations/", {"fragment": "rows", "cursor": response["X-Next-Cursor"]}
    )
    assert more.text.count('class="row-item') == 5


def test_sidebar_lists_pinned_then_project_folders_then_recent(alice_client, alice):
    from conversations.models import Project

    project = Project.objects.create(owner=alice, name="Travel")
    services.create_conversation(user=alice, title="Lisbon", project=project)
    services.create_conversation(user=alice, title="Loose")
    top = services.create_conversation(user=alice, title="On top")
    alice_client.patch(
        f"/api/v1/conversations/{top.id}", {"pinned": True}, content_type="application/json"
    )
    html = alice_client.get("/settings/").text
    sidebar = html.split('id="sidebar"')[1].split("</aside>")[0]
    pinned, rest = sidebar.split('data-group="projects"')
    assert "On top" in pinned and "Lisbon" not in pinned and "Loose" not in pinned
    folders, recent = rest.split('data-group="today"')
    assert "Travel" in folders and "Lisbon" in folders
    assert "Loose" in recent and "On top" not in recent


def test_landing_is_a_new_chat_that_stores_nothing(alice_client, alice):
    from conversations.models import Conversation

    for _ in range(3):
        html = alice_client.get("/").text
    assert 'id="composer-input"' in html and 'id="landing"' in html
    assert Conversation.objects.filter(created_by=alice).count() == 0


def test_old_links_to_the_list_redirect_to_all_conversations(alice_client):
    response = alice_client.get("/", {"q": "plans", "sort": "created_at"})
    assert response.status_code == 302
    assert response["Location"] == "/conversations/?q=plans&sort=created_at"


def test_list_date_presets_filter_by_creation(alice_client, alice):
    from datetime import timedelta

    from django.utils import timezone

    from conversations.models import Conversation

    services.create_conversation(user=alice, title="Fresh")
    old = services.create_conversation(user=alice, title="Ancient")
    Conversation.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=90))
    rows = alice_client.get("/conversations/", {"when": "30d"}).text.split(
        'id="conversation-rows"'
    )[1]
    assert "Fresh" in rows and "Ancient" not in rows
    assert alice_client.get("/conversations/", {"when": "soon"}).status_code == 200  # says why


def test_pages_speak_korean_when_the_browser_asks(alice_client):
    html = alice_client.get("/conversations/", HTTP_ACCEPT_LANGUAGE="ko-KR,ko;q=0.9").text
    assert '<html lang="ko">' in html
    assert "새 채팅" in html and "제목과 메시지 검색" in html and "New chat" not in html


def test_the_memory_page_speaks_korean(alice_client):
    html = alice_client.get("/settings/memory/", HTTP_ACCEPT_LANGUAGE="ko").text
    assert "메모리 사용 및 저장" in html and "아직 메모리가 없습니다." in html
    assert "Use and save memories" not in html


def test_javascript_catalog_has_korean(client):
    response = client.get("/jsi18n/", HTTP_ACCEPT_LANGUAGE="ko")
    assert response.status_code == 200
    assert "\\ucf54\\ub4dc \\ubcf5\\uc0ac" in response.text or "코드 복사" in response.text


def test_language_switch_works_before_login(client):
    response = client.post("/i18n/setlang/", {"language": "ko", "next": "/accounts/login/"})
    assert response.status_code == 302
    assert "로그인" in client.get("/accounts/login/").text


def test_documents_and_tokens_pages_render(alice_client):
    assert alice_client.get("/documents/").status_code == 200
    assert alice_client.get("/settings/tokens/").status_code == 200


def test_templates_have_no_inline_event_handlers():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "templates"
    for path in root.rglob("*.html"):
        assert not re.search(r"\son[a-z]+=", path.read_text()), path


def test_a_share_link_opened_by_another_signed_in_user_shows_no_sidebar(bob_client, alice):
    from conversations import shares

    conversation = services.create_conversation(user=alice, title="Alice's recipe")
    seed.add_message(conversation_id=conversation.id, role="user", content="Kimchi stew")
    services.create_conversation(user=alice, title="Alice's other secret")
    share = shares.create_share(user=alice, conversation_id=conversation.id)
    html = bob_client.get(f"/s/{share.token}/").text
    assert "Kimchi stew" in html and 'id="sidebar"' not in html
    assert "other secret" not in html and 'class="shell"' in html
