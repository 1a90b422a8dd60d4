"""Hybrid retrieval: a passage is found by its words or by its meaning (the bundled
multilingual model, offline), so a question in English finds a Korean passage and the
reverse; vectors are made after an upload and by `embed_chunks`, resumably; one user's
vectors never answer another's question."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from knowledge import embeddings
from knowledge.hybrid import retrieve
from knowledge.models import DocumentChunk
from knowledge.retrieval import retrieve as keyword_retrieve
from knowledge.services import upload_document

pytestmark = pytest.mark.django_db(transaction=True)

LEAVE = (
    "# 연차 규정\n\n연차는 입사 1년 후부터 매년 15일이 주어집니다. "
    "남은 연차는 다음 해로 넘길 수 없습니다."
)
MEALS = "# Expenses\n\nMeals up to 30,000 won per person are reimbursed when you keep the receipt."
OFFICE = "# Office\n\nThe office closes at 6 pm on Fridays and opens at 9 am."
PARKING = "# 주차\n\n회사 주차장은 지하 2층이며 방문객은 안내 데스크에서 등록합니다."


@pytest.fixture
def handbook(alice):
    for name, text in [("leave.md", LEAVE), ("meals.md", MEALS), ("office.md", OFFICE)]:
        upload_document(user=alice, filename=name, data=text.encode())
    upload_document(user=alice, filename="parking.md", data=PARKING.encode())


def titles(found) -> list[str]:
    return [f["document_title"] for f in found]


def test_an_upload_is_embedded_with_the_bundled_model(alice, handbook):
    chunks = DocumentChunk.objects.filter(owner=alice)
    assert chunks.count() == 4
    assert set(chunks.values_list("embedding_model", flat=True)) == {embeddings.BUNDLED_MODEL}
    vector = embeddings.from_bytes(chunks.first().embedding)
    assert vector.shape == (512,) and abs(float(vector @ vector) - 1) < 1e-4


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How many vacation days do I get each year?", "leave"),  # English → Korean passage
        ("Where do visitors park their car?", "parking"),
        ("식대는 얼마까지 돌려받을 수 있어?", "meals"),  # Korean → English passage
        ("금요일에는 사무실이 몇 시에 닫아?", "office"),
    ],
)
def test_a_question_in_one_language_finds_the_passage_in_the_other(
    alice, handbook, question, expected
):
    # By words alone nothing matches across languages ...
    assert expected not in titles(keyword_retrieve(user_id=alice.id, query=question, k=3))
    # ... by meaning it comes first.
    found = retrieve(user_id=alice.id, query=question, k=3)
    assert found[0]["document_title"] == expected, found
    assert found[0]["found_by"] == ["dense"] and found[0]["similarity"] > 0.1


def test_a_passage_both_paths_find_comes_first_and_says_so(alice, handbook):
    found = retrieve(
        user_id=alice.id, query="Are meals per person reimbursed with the receipt?", k=3
    )
    assert found[0]["document_title"] == "meals"
    assert found[0]["found_by"] == ["keyword", "dense"]
    assert found[0]["fused"] > max(f["fused"] for f in found[1:])


def test_another_users_vectors_never_answer(alice, bob, handbook):
    assert retrieve(user_id=bob.id, query="How many vacation days do I get?", k=3) == []
    upload_document(user=bob, filename="bob.md", data=b"# Bob\n\nBob's garden has tomatoes.")
    found = retrieve(user_id=bob.id, query="How many vacation days do I get?", k=3)
    assert titles(found) == ["bob"]


def test_a_document_attached_in_one_conversation_is_not_found_from_another(alice, handbook):
    import uuid

    here, elsewhere = uuid.uuid4(), uuid.uuid4()
    upload_document(
        user=alice,
        filename="pets.md",
        data="# Pets\n\n우리 강아지 이름은 보리야.".encode(),
        scope=here,
    )
    question = "What is my dog's name?"
    assert "pets" in titles(retrieve(user_id=alice.id, query=question, k=3, scope=here))
    assert "pets" not in titles(retrieve(user_id=alice.id, query=question, k=3, scope=elsewhere))
    assert "pets" not in titles(retrieve(user_id=alice.id, query=question, k=3))


def test_embed_chunks_takes_up_what_was_left_and_changes_nothing_twice(alice, handbook):
    DocumentChunk.objects.filter(owner=alice).update(embedding=None, embedding_model="")
    # Until then the passages are found by their words.
    assert titles(retrieve(user_id=alice.id, query="Meals receipt", k=1)) == ["meals"]
    out = io.StringIO()
    call_command("embed_chunks", stdout=out)
    assert "4 chunks to embed" in out.getvalue() and "embedded 4 chunks" in out.getvalue()
    assert not DocumentChunk.objects.filter(embedding_model="").exists()
    again = io.StringIO()
    call_command("embed_chunks", stdout=again)
    assert "0 chunks to embed" in again.getvalue()
    found = retrieve(user_id=alice.id, query="How many vacation days do I get each year?", k=1)
    assert titles(found) == ["leave"]
