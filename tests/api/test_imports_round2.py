"""Imports, round 2 (SPEC "Imports, round 2"): what real exports hold besides plain text —
reasoning, tool calls, citations, settings, cut replies — kept in its place, and a damaged
entry that costs only itself. The fixtures are exports we wrote in each app's shape
(tests/conversations/import_fixtures/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from conversations.models import Conversation, Message

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).parent.parent / "conversations" / "import_fixtures"
MARKUP = ("<details", "</details>", "<summary", "<think", "&gt;", "【", "†", "\ue200", "\ue201")


def imported(api, name: str) -> dict:
    response = api.client.post(
        "/api/v1/conversations/import",
        {"file": SimpleUploadedFile(name, (FIXTURES / name).read_bytes())},
        headers=api.headers,
    )
    assert response.status_code == 201, response.content
    return response.json()


def messages_of(api, conversation_id: str, **params) -> list[dict]:
    response = api.get(f"/conversations/{conversation_id}/messages", **params)
    assert response.status_code == 200
    return response.json()["items"]


def by_import_id(messages: list[dict]) -> dict[str, dict]:
    return {m["metadata"]["import"]["id"]: m for m in messages}


def assert_clean(messages: list[dict]) -> None:
    for message in messages:
        for mark in MARKUP:
            assert mark not in message["content"], (mark, message["content"])


def kinds(message: dict) -> list[str]:
    return [p["type"] if p.get("step") != "reasoning" else "reasoning" for p in message["parts"]]


def test_librechat_recursive_export_under_messages_tree_with_its_options(api, settings):
    settings.OPENAI_API_KEY = "test-key"  # a real model: CHAT_MODELS is on offer
    settings.CHAT_MODEL, settings.CHAT_MODELS = "gpt-4o-mini", "gpt-4o-mini,gpt-4o"
    (conversation,) = imported(api, "librechat_tree_options.json")["items"]
    # The conversation's settings came along: a continuation runs under them.
    assert conversation["model"] == "gpt-4o"
    assert conversation["system_prompt"] == (
        "You are a terse Korean cooking teacher. Answer in at most two sentences."
    )
    assert conversation["temperature"] == 0.3
    everything = by_import_id(messages_of(api, conversation["id"], branch="all"))
    assert conversation["message_count"] == len(everything) == 6  # every message of the tree
    answer = everything["lc-a1"]
    assert answer["content"] == "You have aged kimchi, so make kimchi jjigae."
    assert kinds(answer) == ["reasoning", "tool_call", "tool_result"]
    call, result = answer["parts"][1:]
    assert (call["name"], call["args"]) == ("pantry_lookup", {"item": "kimchi"})
    assert result["content"] == "2 kg aged kimchi" and result["id"] == call["id"]
    assert len(everything["lc-a1b"]["sibling_ids"]) == 2
    # Both cut replies are marked so, whichever way LibreChat said it.
    assert everything["lc-a3"]["finish_reason"] == "interrupted"  # unfinished: true
    assert everything["lc-a3b"]["finish_reason"] == "interrupted"  # finish_reason incomplete
    assert everything["lc-q1"]["finish_reason"] is None
    # No leaf in the file: the newest, as LibreChat shows it.
    assert messages_of(api, conversation["id"])[-1]["metadata"]["import"]["id"] == "lc-a3b"
    assert_clean(list(everything.values()))


def test_a_model_this_site_does_not_offer_falls_back_and_the_rest_is_kept(api, settings):
    settings.OPENAI_API_KEY = "test-key"
    settings.CHAT_MODEL, settings.CHAT_MODELS = "gpt-4o-mini", "gpt-4o-mini"
    (conversation,) = imported(api, "librechat_tree_options.json")["items"]
    assert conversation["model"] == ""  # the site's default
    assert conversation["temperature"] == 0.3 and conversation["system_prompt"]
    # …and the first message says which model made it.
    first = messages_of(api, conversation["id"], branch="all")[0]
    assert (
        "made with gpt-4o; answered here by the default model"
        in (first["metadata"]["import"]["notes"])
    )


def test_one_damaged_chatgpt_conversation_is_listed_and_the_others_imported(api, alice):
    answer = imported(api, "chatgpt_one_damaged.json")
    assert [c["title"] for c in answer["items"]] == ["Packing list", "Kimchi", "Train times"]
    (skipped,) = answer["skipped"]
    assert (skipped["index"], skipped["title"]) == (1, "Broken entry")
    assert "part is neither text nor an object" in skipped["reason"]
    assert sorted(
        Conversation.objects.filter(created_by=alice).values_list("title", flat=True)
    ) == [
        "Kimchi",
        "Packing list",
        "Train times",
    ]
    assert Message.objects.count() == 6
    assert not Message.objects.filter(content="placeholder").exists()


def test_open_webui_reasoning_and_tool_calls_as_details_markup(api):
    tomato, _ = imported(api, "openwebui_reasoning.json")["items"]
    assert tomato["message_count"] == 4
    assert tomato["system_prompt"] == "You are a patient gardening coach."
    shown = by_import_id(messages_of(api, tomato["id"]))
    assert_clean(list(shown.values()))
    reply = shown["d2"]
    assert reply["content"] == (
        "It is 31°C and sunny in Busan, so water your tomatoes every morning."
    )
    thought, call, result = reply["parts"]
    assert thought == {
        "type": "thinking",
        "step": "reasoning",
        "content": "The user asks about watering tomatoes in July.\n"
        "Hot weather means more water; I should check the forecast & answer.",
        "seconds": 4,
    }
    assert (call["type"], call["name"], call["args"]) == (
        "tool_call",
        "get_weather",
        {"city": "Busan"},
    )
    assert (result["type"], result["content"]) == ("tool_result", "Busan: 31°C, sunny")
    # A reply Open WebUI had not finished (done: false) is cut, its reasoning kept aside.
    cut = shown["d4"]
    assert cut["finish_reason"] == "interrupted"
    assert cut["content"] == "June: stake the plants. July: water every morning and"
    assert kinds(cut) == ["reasoning"]


def test_open_webui_reasoning_and_tool_calls_as_structured_output(api):
    _, currency = imported(api, "openwebui_reasoning.json")["items"]
    shown = by_import_id(messages_of(api, currency["id"]))
    assert currency["message_count"] == len(shown) == 4
    assert_clean(list(shown.values()))
    # The newest Open WebUI leaves `content` empty: the words come from `output`.
    reply = shown["o2"]
    assert reply["content"] == "100 US dollars is about 137,250 won today."
    assert kinds(reply) == ["reasoning", "tool_call", "tool_result"]
    assert reply["parts"][1]["args"] == {"amount": 100, "from": "USD", "to": "KRW"}
    assert reply["parts"][2]["content"] == "137,250 KRW"
    assert reply["parts"][2]["name"] == "convert_currency"
    # An older model's raw <think> block.
    assert shown["o4"]["content"] == "You're welcome!"
    assert shown["o4"]["parts"][0]["content"] == "Just a thank-you; reply briefly."


def test_chatgpt_browsing_thoughts_and_citations(api):
    busan, _ = imported(api, "chatgpt_browsing.json")["items"]
    shown = by_import_id(messages_of(api, busan["id"]))
    # Six messages a person saw; the four tool turns and the thoughts became parts.
    assert busan["message_count"] == len(shown) == 6
    assert [m["role"] for m in shown.values()] == ["user", "assistant"] * 3
    assert_clean(list(shown.values()))
    first = shown["a1"]
    assert first["content"] == (
        "Busan has about 3.3 million people ([Busan - Wikipedia](https://en.wikipedia.org/wiki/Busan))."
    )
    assert kinds(first) == [
        "reasoning",
        "tool_call",
        "tool_result",
        "tool_call",
        "tool_result",
        "references",
    ]
    assert first["parts"][0]["seconds"] == 5
    assert first["parts"][1] == {
        "type": "tool_call",
        "id": "call1",
        "name": "browser",
        "args": 'search("Busan population 2024")',
    }
    assert "3.3 million (2024)" in first["parts"][4]["content"]
    assert first["parts"][-1]["items"] == [
        {"title": "Busan - Wikipedia", "url": "https://en.wikipedia.org/wiki/Busan"}
    ]
    # Newer exports' private-use markers: a group of sources, and a name standing alone.
    second = shown["a2"]["content"]
    assert "[Population of Seoul (2024)](https://kosis.kr/eng/?utm_source=chatgpt.com)" in second
    assert "[Seoul at a glance](https://www.seoul.go.kr/)" in second
    assert second.endswith("around 26 million Seoul Capital Area.")
    assert shown["a2"]["parts"][0]["args"] == {"search_query": [{"q": "Seoul population 2024"}]}
    # The reply ChatGPT marked interrupted can be continued.
    assert shown["a3"]["finish_reason"] == "interrupted"
    # Custom instructions are dropped, and the first message says so.
    assert shown["q1"]["metadata"]["import"]["notes"] == ["dropped the custom instructions"]


def test_a_dropped_first_message_is_noted_on_the_reply_that_opens_the_conversation(api):
    _, voice = imported(api, "chatgpt_browsing.json")["items"]
    shown = messages_of(api, voice["id"])
    assert shown[0]["role"] == "assistant"
    assert shown[0]["metadata"]["import"]["notes"] == ["dropped a user message with no text"]


def test_the_page_folds_the_reasoning_above_a_clean_reply(api, alice_client):
    tomato, _ = imported(api, "openwebui_reasoning.json")["items"]
    page = alice_client.get(f"/conversations/{tomato['id']}/").content.decode()
    assert '<details class="reasoning">' in page
    assert "Thought for 4 seconds" in page and "check the forecast &amp; answer" in page
    assert "&lt;details" not in page and "Tool Executed" not in page
    # The tool call is a step in the reply's details, with what it was given.
    assert "get_weather" in page and "Busan: 31°C, sunny" in page


def _fixture(name: str):
    return json.loads((FIXTURES / name).read_text())


def _upload(api, data) -> dict:
    body = json.dumps(data).encode()
    response = api.client.post(
        "/api/v1/conversations/import",
        {"file": SimpleUploadedFile("export.json", body)},
        headers=api.headers,
    )
    return response


def test_a_wrong_citation_index_never_turns_a_word_into_a_link(api):
    data = _fixture("chatgpt_browsing.json")
    reply = data[0]["mapping"]["a1"]["message"]
    reply["metadata"]["citations"][0].update(start_ix=10, end_ix=13)  # "has" not a marker
    reply["metadata"]["citations"].append({"start_ix": -5, "end_ix": "x", "metadata": None})
    data[0]["mapping"]["a2"]["message"]["metadata"]["content_references"] = "not a list"
    response = _upload(api, data)
    assert response.status_code == 201, response.content
    shown = by_import_id(messages_of(api, response.json()["items"][0]["id"]))
    # The marker had no usable source: removed, and the reply says so; "has" stays a word.
    assert shown["a1"]["content"] == "Busan has about 3.3 million people."
    assert shown["a1"]["metadata"]["import"]["notes"] == [
        "removed 1 citation marker(s) without a source"
    ]
    assert_clean(list(shown.values()))


def test_settings_out_of_range_are_noted_and_never_cost_the_conversation(api):
    data = _fixture("librechat_tree_options.json")
    data["options"].update(temperature="hot", promptPrefix="Be brief. " * 1000)
    response = _upload(api, data)
    assert response.status_code == 201, response.content
    (conversation,) = response.json()["items"]
    assert conversation["temperature"] is None
    assert len(conversation["system_prompt"]) == 8000
    first = messages_of(api, conversation["id"])[0]
    assert first["metadata"]["import"]["notes"] == [
        "the instructions were cut to 8000 characters",
        "the temperature hot was not kept (0 to 2)",
        "made with gpt-4o; answered here by the default model",  # the offline model here
    ]


def test_what_a_row_cannot_hold_in_a_reasoning_costs_only_its_conversation(api, alice):
    data = _fixture("openwebui_reasoning.json")
    data[0]["chat"]["history"]["messages"]["d2"]["content"] = data[0]["chat"]["history"][
        "messages"
    ]["d2"]["content"].replace("July.", "July.\u0000")
    data[1]["chat"]["history"]["messages"]["o2"]["output"].extend([7, None, {"type": 3}])
    response = _upload(api, data)
    assert response.status_code == 201, response.content
    answer = response.json()
    assert [c["title"] for c in answer["items"]] == ["Currency"]
    (skipped,) = answer["skipped"]
    assert skipped["title"] == "Tomato care" and "NUL" in skipped["reason"]
    assert Conversation.objects.filter(created_by=alice).count() == 1


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(messagesTree={"not": "a list"}),
        lambda d: d["messagesTree"][0].update(createdAt="9999-12-31T23:59:59-14:00"),
        lambda d: d["messagesTree"][0].update(createdAt=253402300800000),
    ],
)
def test_a_single_conversation_file_that_cannot_be_read_is_refused(api, alice, change):
    data = _fixture("librechat_tree_options.json")
    change(data)
    response = _upload(api, data)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid_import"
    assert not Conversation.objects.filter(created_by=alice).exists()


def test_a_long_librechat_recursive_export_is_stored_whole(api):
    # A linear chat of 700 messages as LibreChat's recursive export: 1,400 levels deep,
    # past what Python's own JSON parser reads (it recurses once a level); written by hand,
    # since json.dumps recurses too.
    count = 700
    heads = []
    for n in range(count):
        fields = {
            "messageId": f"m{n}",
            "text": f"message {n}",
            "sender": "User" if n % 2 == 0 else "GPT-4",
            "isCreatedByUser": n % 2 == 0,
            "createdAt": f"2026-01-01T{n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        }
        heads.append(json.dumps(fields)[:-1] + ', "children": [')
    tree = "".join(heads) + "]}" * count
    raw = '{"conversationId": "lc-deep", "title": "Deep", "messagesTree": [' + tree + "]}"
    with pytest.raises(RecursionError):
        json.loads(raw)  # the mechanism: too deep for the strict parser
    response = api.client.post(
        "/api/v1/conversations/import",
        {"file": SimpleUploadedFile("deep.json", raw.encode())},
        headers=api.headers,
    )
    assert response.status_code == 201, response.content
    (conversation,) = response.json()["items"]
    assert conversation["message_count"] == count
    newest = messages_of(api, conversation["id"], after=count - 3)
    assert [m["content"] for m in newest] == [f"message {n}" for n in range(count - 3, count)]
