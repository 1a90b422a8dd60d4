"""Imports from other apps (SPEC "Importing from other apps"): ChatGPT, Claude, Open WebUI
and LibreChat exports we wrote ourselves in their published shapes
(tests/conversations/import_fixtures/), detected from the content."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from conversations.models import Conversation, Message

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).parent.parent / "conversations" / "import_fixtures"


def upload(api, name: str, data: bytes):
    """POST the file as a browser would: multipart, field `file`."""
    return api.client.post(
        "/api/v1/conversations/import",
        {"file": SimpleUploadedFile(name, data, content_type="application/octet-stream")},
        headers=api.headers,
    )


def messages_of(api, conversation_id: str, **params):
    response = api.get(f"/conversations/{conversation_id}/messages", **params)
    assert response.status_code == 200
    return response.json()["items"]


def test_chatgpt_export_keeps_every_conversation_branches_and_the_current_leaf(api):
    response = upload(
        api, "conversations.json", (FIXTURES / "chatgpt_conversations.json").read_bytes()
    )
    assert response.status_code == 201, response.content
    dogs, intro = response.json()["items"]
    assert (dogs["title"], intro["title"]) == ("Dog names", "자기소개")
    assert dogs["message_count"] == 4  # the hidden system turn, the tool call and result dropped
    assert dogs["created_at"].startswith("2024-06-01")

    shown = messages_of(api, dogs["id"])  # the current branch: the Bori one
    assert [(m["role"], m["content"]) for m in shown] == [
        ("user", "[image]\nMy dog's name is Bori. Here is her photo."),
        ("assistant", "Bori is a lovely name for a dog."),
    ]
    assert shown[0]["created_at"].startswith("2024-06-01T00:00:10")
    assert shown[1]["model"] == "gpt-4o" and shown[0]["model"] == ""
    assert shown[0]["metadata"]["import"] == {
        "from": "chatgpt",
        "id": "u-bori",
        "notes": ["dropped a image_asset_pointer"],
    }
    everything = messages_of(api, dogs["id"], branch="all")
    assert [m["content"] for m in everything][2:] == [
        "My cat's name is Nabi.",
        "Nabi means butterfly.",
    ]
    assert len(shown[0]["sibling_ids"]) == 2  # two first messages: an edit in ChatGPT
    assert [m["content"] for m in messages_of(api, intro["id"])] == [
        "내 이름은 철수야.",
        "반가워요, 철수 님!",
    ]


def test_chatgpt_zip_as_it_is_downloaded(api):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("chat.html", "<html></html>")
        z.writestr("user.json", "{}")
        z.writestr("conversations.json", (FIXTURES / "chatgpt_conversations.json").read_bytes())
    response = upload(api, "export.zip", archive.getvalue())
    assert response.status_code == 201, response.content
    assert [c["title"] for c in response.json()["items"]] == ["Dog names", "자기소개"]


def test_claude_export(api):
    response = upload(
        api, "conversations.json", (FIXTURES / "claude_conversations.json").read_bytes()
    )
    assert response.status_code == 201, response.content
    (conversation,) = response.json()["items"]
    assert conversation["title"] == "Weekend plans"
    shown = messages_of(api, conversation["id"])
    assert [m["role"] for m in shown] == ["user", "assistant", "user", "assistant"]
    assert (
        shown[0]["content"] == "My dog's name is Bori and I live in Busan.\n\n[attachment: map.txt]"
    )
    assert shown[1]["content"] == "Busan has great beaches for a walk with Bori."
    # The tool call is kept as a step of the reply, not dropped.
    assert shown[1]["parts"] == [
        {"type": "tool_call", "id": "", "name": "web_search", "args": {"q": "Busan beaches"}}
    ]
    assert "notes" not in shown[1]["metadata"]["import"]
    assert shown[3]["created_at"].startswith("2025-03-01T09:01:04")


def test_open_webui_export_keeps_its_tree_and_current_message(api):
    response = upload(api, "chat-export.json", (FIXTURES / "openwebui_export.json").read_bytes())
    assert response.status_code == 201, response.content
    (conversation,) = response.json()["items"]
    assert conversation["title"] == "Garden"
    shown = messages_of(api, conversation["id"])
    assert [m["content"] for m in shown] == [
        "I planted tomatoes on May 3rd.",
        "Great! Water them every other day.",
        "How tall will they get?",
        "About 1.5 m with support.",
    ]
    assert shown[1]["model"] == "qwen2.5:7b" and len(shown[1]["sibling_ids"]) == 2
    assert conversation["current_message_id"] == shown[-1]["id"]


def test_librechat_export_with_nested_branches(api):
    response = upload(api, "Recipe.json", (FIXTURES / "librechat_export.json").read_bytes())
    assert response.status_code == 201, response.content
    (conversation,) = response.json()["items"]
    everything = messages_of(api, conversation["id"], branch="all")
    assert [m["content"] for m in everything] == [
        "My favourite dish is kimchi jjigae.",
        "A classic! Use well-fermented kimchi.",
        "Add pork belly for depth.",
    ]
    # No leaf in the file: the newest one, as LibreChat shows it.
    assert [m["content"] for m in messages_of(api, conversation["id"])][
        -1
    ] == "Add pork belly for depth."
    assert everything[1]["model"] == "gpt-4o"


def test_this_apps_own_export_still_answers_the_conversation(api, alice):
    from .conftest import make_conversation

    original = make_conversation(alice, title="Ours", contents=["q", "a"])
    exported = api.get(f"/conversations/{original.id}/export", format="json")
    exported = b"".join(exported)  # an async stream, read the way a sync server would
    response = upload(api, "ours.json", exported)
    assert response.status_code == 201
    # A copy beside its original says it is one: two identical rows would tell nothing.
    assert response.json()["title"] == "Ours (imported)" and "items" not in response.json()


def test_a_second_import_of_another_apps_file_names_the_app(api):
    data = (FIXTURES / "chatgpt_conversations.json").read_bytes()
    first = upload(api, "conversations.json", data).json()["items"]
    again = upload(api, "conversations.json", data).json()["items"]
    assert [c["title"] for c in first] == ["Dog names", "자기소개"]
    assert [c["title"] for c in again] == ["Dog names (ChatGPT)", "자기소개 (ChatGPT)"]


def _chatgpt_with(**changes) -> bytes:
    data = json.loads((FIXTURES / "chatgpt_conversations.json").read_text())
    node = data[1]["mapping"]["u1"]["message"]
    for key, value in changes.items():
        if key == "mapping":
            data[1]["mapping"] = value
        elif key == "text":
            node["content"]["parts"] = [value]
        else:
            node[key] = value
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (_chatgpt_with(text="a\u0000b"), "messages.0.content"),
        (_chatgpt_with(create_time=1e15), "messages.0.created_at"),
        (_chatgpt_with(create_time=-1e14), "messages.0.created_at"),
        (_chatgpt_with(text=["not", "text"]), "not a well-formed chatgpt conversation"),
        (_chatgpt_with(mapping=[]), "not a well-formed chatgpt conversation"),
    ],
)
def test_one_damaged_conversation_is_skipped_and_the_rest_imported(api, alice, data, named):
    response = upload(api, "conversations.json", data)
    assert response.status_code == 201, response.content
    answer = response.json()
    assert [c["title"] for c in answer["items"]] == ["Dog names"]
    (skipped,) = answer["skipped"]
    assert (skipped["index"], skipped["title"]) == (1, "자기소개")
    assert skipped["reason"].startswith(named), skipped["reason"]
    # Nothing of the damaged one is stored; the good one whole.
    assert list(Conversation.objects.filter(created_by=alice).values_list("title", flat=True)) == [
        "Dog names"
    ]
    assert Message.objects.count() == answer["items"][0]["message_count"] == 4


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (
            b'[{"mapping": {"a": {"message": {"author": {"role": "user"}, "content": '
            b'{"parts": ["x"]}}, "parent": "b"}, "b": {"message": {"author": {"role": "user"}, '
            b'"content": {"parts": ["y"]}}, "parent": "a"}}}]',
            "conversations[0]",
        ),
        (b'[{"mapping": []}]', "conversations[0]"),
        (b'[{"hello": "world"}]', "conversations[0]"),
        (b"[1, 2]", "conversations[0]"),
        (b'"just a string"', "file"),
        (b'[{"mapping": {}', "file"),
        (b"\xff\xfe[]", "file"),
        (b"[]", "file"),
        (b"[" * 100_000, "file"),
        (b"PK\x03\x04 not really a zip", "file"),
    ],
)
def test_a_file_with_nothing_readable_is_refused_naming_the_place(api, alice, data, named):
    response = upload(api, "conversations.json", data)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid_import"
    assert error["message"].startswith(named), error["message"]
    assert not Conversation.objects.filter(created_by=alice).exists()
    assert not Message.objects.exists()


def test_a_zip_without_conversations_is_refused(api):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("a.json", "[]")
        z.writestr("b.json", "[]")
    response = upload(api, "export.zip", archive.getvalue())
    assert (
        response.status_code == 400 and "conversations.json" in response.json()["error"]["message"]
    )


def test_size_limits_hold_inside_a_zip_and_per_conversation(api, alice, settings):
    settings.CHAT_IMPORT_MAX_FILE_BYTES = 200_000
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", "[" + " " * 5_000_000 + "]")  # 5 MB of nothing
    assert len(archive.getvalue()) < 50_000
    response = upload(api, "bomb.zip", archive.getvalue())
    assert response.status_code == 413
    settings.CHAT_IMPORT_MAX_FILE_BYTES = 10_000_000
    # One conversation over the limit is passed over (never built); the rest imports.
    settings.CHAT_IMPORT_MAX_BYTES = 8_000
    response = upload(api, "conversations.json", _chatgpt_with(text="x" * 20_000))
    assert response.status_code == 201, response.content
    assert [c["title"] for c in response.json()["items"]] == ["Dog names"]
    assert response.json()["skipped"] == [
        {"index": 1, "title": "", "reason": "larger than 8000 bytes"}
    ]
    # One string larger than a conversation may be (the parser would hold it whole) is
    # refused with the file.
    response = upload(api, "conversations.json", _chatgpt_with(text="x" * 500_000))
    assert response.status_code == 413
    assert Conversation.objects.filter(created_by=alice).count() == 1
    # This app's file of one conversation over the limit.
    settings.CHAT_IMPORT_MAX_BYTES = 2_000
    ours = json.dumps(
        {
            "format": "chatsite.conversation",
            "version": 1,
            "conversation": {},
            "messages": [{"sequence_number": 1, "role": "user", "content": "x" * 5_000}],
        }
    ).encode()
    assert upload(api, "ours.json", ours).status_code == 413


def test_a_file_that_breaks_off_keeps_what_came_before(api, alice):
    whole = (FIXTURES / "chatgpt_conversations.json").read_bytes()
    cut = whole[: whole.index(b'"\xec\x9e\x90\xea\xb8\xb0')]  # inside the second one
    response = upload(api, "conversations.json", cut)
    assert response.status_code == 201, response.content
    answer = response.json()
    assert [c["title"] for c in answer["items"]] == ["Dog names"]
    (skipped,) = answer["skipped"]
    assert skipped["index"] == 1 and skipped["reason"].startswith("not valid JSON from here on")


def test_a_lone_surrogate_in_one_conversation_file_is_refused(api, alice):
    data = (FIXTURES / "librechat_export.json").read_text().replace("kimchi jjigae", "\\ud800")
    assert "\\ud800" in data
    response = upload(api, "Recipe.json", data.encode())
    assert response.status_code == 400
    assert not Conversation.objects.filter(created_by=alice).exists()


def test_imported_conversations_are_the_importers_only(api, bob_api):
    response = upload(api, "c.json", (FIXTURES / "claude_conversations.json").read_bytes())
    conversation_id = response.json()["items"][0]["id"]
    assert bob_api.get(f"/conversations/{conversation_id}").status_code == 404
