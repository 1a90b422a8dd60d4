from __future__ import annotations

import pytest
from django.db import connection

from conversations.search import highlight

from .conftest import make_conversation

pytestmark = pytest.mark.django_db


def test_english_word_finds_the_message_with_ids_to_jump_to(api, alice):
    conversation = make_conversation(
        alice, contents=["Let us plan the launch", "Sure", "The budget matters", "Agreed"]
    )
    body = api.get("/search/messages", q="budget").json()
    [hit] = body["items"]
    message = conversation.messages.get(sequence_number=3)
    assert hit["conversation_id"] == str(conversation.id)
    assert hit["message_id"] == str(message.id)
    assert hit["sequence_number"] == 3
    assert "<mark>budget</mark>" in hit["snippet"]


def test_search_is_case_insensitive_and_finds_word_prefixes(api, alice):
    make_conversation(alice, contents=["Planning the Launch"])
    assert len(api.get("/search/messages", q="plan").json()["items"]) == 1
    assert len(api.get("/search/messages", q="LAUNCH").json()["items"]) == 1


def test_every_term_must_match(api, alice):
    make_conversation(alice, contents=["red apple", "green apple", "red car"])
    hits = api.get("/search/messages", q="red apple").json()["items"]
    assert [h["sequence_number"] for h in hits] == [1]


def test_snippet_escapes_html_around_the_highlight(api, alice):
    make_conversation(alice, contents=["<script>alert(1)</script> budget & more"])
    [hit] = api.get("/search/messages", q="budget").json()["items"]
    assert "<script>" not in hit["snippet"]
    assert "&lt;script&gt;" in hit["snippet"]
    assert "<mark>budget</mark> &amp; more" in hit["snippet"]


def test_long_messages_get_a_window_around_the_match():
    text = "word " * 200 + "needle " + "tail " * 200
    snippet = highlight(text, ["needle"])
    assert "<mark>needle</mark>" in snippet
    assert snippet.startswith("…") and snippet.endswith("…")
    assert len(snippet) < 220


def test_search_pages_with_a_cursor(api, alice):
    make_conversation(alice, contents=[f"budget item {i}" for i in range(7)])
    seen, cursor = [], None
    while True:
        params = {"q": "budget", "limit": 3} | ({"cursor": cursor} if cursor else {})
        body = api.get("/search/messages", **params).json()
        seen += [h["message_id"] for h in body["items"]]
        cursor = body["next_cursor"]
        if not cursor:
            break
    assert len(seen) == len(set(seen)) == 7


def test_search_needs_a_term(api):
    assert api.get("/search/messages").status_code == 422
    assert api.get("/search/messages", q="   ").status_code == 422


def test_like_wildcards_are_taken_literally(api, alice):
    make_conversation(alice, contents=["100% sure", "1000 things"])
    hits = api.get("/search/messages", q="100%").json()["items"]
    assert [h["sequence_number"] for h in hits] == [1]


def test_korean_word_inside_a_sentence_is_found(api, alice):
    conversation = make_conversation(
        alice, title="주간 계획", contents=["내일 회의가 있습니다", "네, 알겠습니다", "점심 메뉴"]
    )
    [hit] = api.get("/search/messages", q="회의").json()["items"]
    assert hit["sequence_number"] == 1
    assert "<mark>회의</mark>가" in hit["snippet"]
    listed = api.get("/conversations", q="회의").json()["items"]
    assert [c["id"] for c in listed] == [str(conversation.id)]


@pytest.mark.postgres
def test_korean_substring_search_uses_full_text_and_trigrams_on_postgres(
    require_postgres, api, alice
):
    conversation = make_conversation(
        alice, contents=["다음 주 회의가 취소되었습니다", "알겠습니다", "회의록을 공유해 주세요"]
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT show_trgm('회의가')")
        assert cursor.fetchone()[0], "pg_trgm sees no Korean trigrams: the database is not UTF-8"
        cursor.execute(
            "SELECT count(*) FROM conversations_message"
            " WHERE search_vector @@ to_tsquery('simple', '''회의'':*')"
        )
        assert cursor.fetchone()[0] == 2
    hits = api.get("/search/messages", q="회의").json()["items"]
    assert {h["sequence_number"] for h in hits} == {1, 3}
    # A substring in the middle of a word is found through pg_trgm.
    hits = api.get("/search/messages", q="의록").json()["items"]
    assert [h["sequence_number"] for h in hits] == [3]
    assert all(h["conversation_id"] == str(conversation.id) for h in hits)


@pytest.mark.postgres
def test_search_indexes_exist_on_postgres(require_postgres):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename IN"
            " ('conversations_message', 'conversations_conversation')"
        )
        names = {row[0] for row in cursor.fetchall()}
    assert {
        "message_search_vector",
        "message_content_trgm",
        "conversation_search_vector",
        "conversation_title_trgm",
    } <= names


@pytest.mark.postgres
def test_exact_word_ranks_above_a_passing_mention(require_postgres, api, alice):
    make_conversation(alice, contents=["budgeting tools and many other words here", "budget", "x"])
    hits = api.get("/search/messages", q="budget").json()["items"]
    assert [h["sequence_number"] for h in hits] == [2, 1]
